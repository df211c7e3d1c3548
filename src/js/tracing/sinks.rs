//! Picks the span sink for a resolved exporter choice.

use crate::export::config::{Env, ExporterChoice, NoExportKind, NoExportWarning, WarningHook};
use crate::export::console::{color_enabled, ConsoleSink};
use crate::export::memory::MemorySink;
use crate::export::otlp::OtlpSink;
use crate::trace::sink::SpanSink;
use crate::trace::span::SpanData;
use std::sync::Arc;
use std::time::Duration;

pub struct Sinks {
    pub sink: Arc<dyn SpanSink>,
    /// Set for the `memory` exporter: `getFinishedSpans` reads it.
    pub memory: Option<Arc<MemorySink>>,
    /// A warning to emit once per process (nothing will be exported).
    pub warning: Option<NoExportWarning>,
    /// The sink holds spans the exit path must deliver (or print).
    pub deliver_at_exit: bool,
    /// The sink prints each trace as its run ends (console).
    pub prints: bool,
}

/// Drops every span.
pub struct NoopSink;

impl SpanSink for NoopSink {
    fn on_end(&self, _span: SpanData) {}
    fn force_flush(&self, _timeout: Duration) -> bool {
        true
    }
    fn shutdown(&self, _timeout: Duration) {}
}

/// `stdout_is_tty` decides the console exporter's colours (with `env`).
/// `on_warning` receives the OTLP exporter's warnings from its thread.
pub fn sinks_for(
    choice: ExporterChoice,
    stdout_is_tty: bool,
    env: Env<'_>,
    on_warning: Option<WarningHook>,
) -> Sinks {
    match choice {
        ExporterChoice::Memory => {
            let memory = Arc::new(MemorySink::new());
            Sinks {
                sink: memory.clone(),
                memory: Some(memory),
                warning: None,
                deliver_at_exit: false,
                prints: false,
            }
        }
        ExporterChoice::Console => Sinks {
            sink: Arc::new(ConsoleSink::new(color_enabled(stdout_is_tty, env))),
            memory: None,
            warning: None,
            deliver_at_exit: true,
            prints: true,
        },
        ExporterChoice::None { warning } => Sinks {
            sink: Arc::new(NoopSink),
            memory: None,
            warning,
            deliver_at_exit: false,
            prints: false,
        },
        // Its warnings (resolution and delivery) go to `on_warning`; without
        // one, `NativeTracer::take_warnings` drains them.
        ExporterChoice::Otlp(config) => {
            let mut config = *config;
            config.on_warning = on_warning;
            match OtlpSink::start(config) {
                Ok(sink) => Sinks {
                    sink: Arc::new(sink),
                    memory: None,
                    warning: None,
                    deliver_at_exit: true,
                    prints: false,
                },
                Err(message) => Sinks {
                    sink: Arc::new(NoopSink),
                    memory: None,
                    warning: Some(NoExportWarning::new(NoExportKind::StartFailed, message)),
                    deliver_at_exit: false,
                    prints: false,
                },
            }
        }
    }
}
