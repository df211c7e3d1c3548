//! Picks the span sink for a resolved exporter choice.

use crate::export::config::ExporterChoice;
use crate::export::console::{color_enabled, ConsoleSink};
use crate::export::memory::MemorySink;
use crate::export::otlp::OtlpSink;
use crate::export::SpanSink;
use crate::trace::span::SpanData;
use std::sync::Arc;
use std::time::Duration;

pub struct Sinks {
    pub sink: Arc<dyn SpanSink>,
    /// Set for the `memory` exporter: `getFinishedSpans` reads it.
    pub memory: Option<Arc<MemorySink>>,
    /// A warning to emit once per process (nothing will be exported).
    pub warning: Option<String>,
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

/// `stdout_is_tty` decides the console exporter's colours (with the env).
pub fn sinks_for(choice: ExporterChoice, stdout_is_tty: bool) -> Sinks {
    match choice {
        ExporterChoice::Memory => {
            let memory = Arc::new(MemorySink::new());
            Sinks {
                sink: memory.clone(),
                memory: Some(memory),
                warning: None,
            }
        }
        ExporterChoice::Console => Sinks {
            sink: Arc::new(ConsoleSink::new(color_enabled(stdout_is_tty, &|k| {
                std::env::var(k).ok()
            }))),
            memory: None,
            warning: None,
        },
        ExporterChoice::None { warning } => Sinks {
            sink: Arc::new(NoopSink),
            memory: None,
            warning,
        },
        // Its warnings (resolution and delivery) are drained by
        // `NativeTracer::take_warnings`, on the JavaScript thread.
        ExporterChoice::Otlp(config) => match OtlpSink::start(*config) {
            Ok(sink) => Sinks {
                sink: Arc::new(sink),
                memory: None,
                warning: None,
            },
            Err(message) => Sinks {
                sink: Arc::new(NoopSink),
                memory: None,
                warning: Some(message),
            },
        },
    }
}
