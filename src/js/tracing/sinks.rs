//! Picks the span sink for a resolved exporter choice. The console and OTLP
//! sinks are wired here when they land; until then console uses a tiny
//! stand-in and OTLP exports nothing.

use crate::export::config::ExporterChoice;
use crate::export::memory::MemorySink;
use crate::export::SpanSink;
use crate::trace::ids::hex;
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

/// Stand-in for the console exporter: one line per ended span.
pub struct LineSink;

impl SpanSink for LineSink {
    fn on_end(&self, span: SpanData) {
        let ms = span
            .end_time_unix_nano
            .saturating_sub(span.start_time_unix_nano) as f64
            / 1e6;
        println!("[trace {}] {} ({ms:.1} ms)", hex(&span.trace_id), span.name);
    }
    fn force_flush(&self, _timeout: Duration) -> bool {
        true
    }
    fn shutdown(&self, _timeout: Duration) {}
}

pub fn sinks_for(choice: ExporterChoice) -> Sinks {
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
            sink: Arc::new(LineSink),
            memory: None,
            warning: None,
        },
        ExporterChoice::None { warning } => Sinks {
            sink: Arc::new(NoopSink),
            memory: None,
            warning,
        },
        // The OTLP sink is wired by the exporter work; nothing is sent yet.
        ExporterChoice::Otlp(_) => Sinks {
            sink: Arc::new(NoopSink),
            memory: None,
            warning: None,
        },
    }
}
