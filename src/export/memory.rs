//! The `memory` exporter: keeps every ended span, in end order, for
//! `getFinishedSpans()` and tests.

use crate::trace::sink::SpanSink;
use crate::trace::span::SpanData;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Default)]
pub struct MemorySink {
    spans: Mutex<Vec<SpanData>>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every span ended so far, in end order.
    pub fn spans(&self) -> Vec<SpanData> {
        match self.spans.lock() {
            Ok(spans) => spans.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl SpanSink for MemorySink {
    fn on_end(&self, span: SpanData) {
        match self.spans.lock() {
            Ok(mut spans) => spans.push(span),
            Err(poisoned) => poisoned.into_inner().push(span),
        }
    }

    fn force_flush(&self, _timeout: Duration) -> bool {
        true
    }

    // Spans stay readable after shutdown (tracing.md).
    fn shutdown(&self, _timeout: Duration) {}
}
