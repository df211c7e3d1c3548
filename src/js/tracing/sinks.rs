//! Picks the span sink for a resolved exporter choice.

use crate::export::config::{
    Env, ExporterChoice, NoExportKind, NoExportWarning, OtlpConfig, WarningHook,
};
use crate::export::console::{color_enabled, ConsoleSink};
use crate::export::memory::MemorySink;
use crate::export::otlp::OtlpSink;
use crate::export::tee::TeeSink;
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
        ExporterChoice::Console { warning } => Sinks {
            sink: console(stdout_is_tty, env),
            memory: None,
            warning,
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
        ExporterChoice::Otlp(config) => match start_otlp(*config, on_warning) {
            Ok(sink) => Sinks {
                sink,
                memory: None,
                warning: None,
                deliver_at_exit: true,
                prints: false,
            },
            Err(warning) => Sinks {
                sink: Arc::new(NoopSink),
                memory: None,
                warning: Some(warning),
                deliver_at_exit: false,
                prints: false,
            },
        },
        ExporterChoice::ConsoleAndOtlp(config) => {
            let console = console(stdout_is_tty, env);
            let (sink, warning) = match start_otlp(*config, on_warning) {
                Ok(otlp) => (
                    Arc::new(TeeSink::new(vec![console, otlp])) as Arc<dyn SpanSink>,
                    None,
                ),
                Err(warning) => (console, Some(warning)),
            };
            Sinks {
                sink,
                memory: None,
                warning,
                deliver_at_exit: true,
                prints: true,
            }
        }
    }
}

fn console(stdout_is_tty: bool, env: Env<'_>) -> Arc<dyn SpanSink> {
    Arc::new(ConsoleSink::new(color_enabled(stdout_is_tty, env)))
}

/// The OTLP exporter's thread; its warnings (resolution and delivery) go to
/// `on_warning`, and without one `NativeTracer::take_warnings` drains them.
fn start_otlp(
    mut config: OtlpConfig,
    on_warning: Option<WarningHook>,
) -> Result<Arc<dyn SpanSink>, NoExportWarning> {
    config.on_warning = on_warning;
    match OtlpSink::start(config) {
        Ok(sink) => Ok(Arc::new(sink)),
        Err(message) => Err(NoExportWarning::new(NoExportKind::StartFailed, message)),
    }
}
