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

/// Puts `span` after every span that ended no later (ties keep arrival
/// order). Spans mostly arrive in end order; a tool call whose end is known
/// only later (it ends at its last callback, when its function response
/// event comes, or the run's end) arrives after spans that ended after it.
fn insert_in_end_order(spans: &mut Vec<SpanData>, span: SpanData) {
    let at = (spans.iter())
        .rposition(|s| s.end_time_unix_nano <= span.end_time_unix_nano)
        .map_or(0, |i| i + 1);
    spans.insert(at, span);
}

impl SpanSink for MemorySink {
    fn on_end(&self, span: SpanData) {
        match self.spans.lock() {
            Ok(mut spans) => insert_in_end_order(&mut spans, span),
            Err(poisoned) => insert_in_end_order(&mut poisoned.into_inner(), span),
        }
    }

    fn force_flush(&self, _timeout: Duration) -> bool {
        true
    }

    // Spans stay readable after shutdown (tracing.md).
    fn shutdown(&self, _timeout: Duration) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended_at(name: &str, end: u64) -> SpanData {
        SpanData::bare(name, 0, end)
    }

    #[test]
    fn spans_are_read_in_end_order_whenever_they_arrive() {
        let sink = MemorySink::new();
        for (name, end) in [("a", 10), ("b", 30), ("late", 20), ("tie", 30), ("c", 40)] {
            sink.on_end(ended_at(name, end));
        }
        let names: Vec<String> = sink.spans().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["a", "late", "b", "tie", "c"]);
    }
}
