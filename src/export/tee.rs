//! Hands every span to several sinks: `OTEL_TRACES_EXPORTER` may list more
//! than one exporter (`console,otlp`), and each gets every span.

use crate::trace::sink::{SinkWarning, SpanSink};
use crate::trace::span::SpanData;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct TeeSink {
    sinks: Vec<Arc<dyn SpanSink>>,
}

impl TeeSink {
    pub fn new(sinks: Vec<Arc<dyn SpanSink>>) -> Self {
        Self { sinks }
    }
}

/// What is left of `timeout` since `start`.
fn left(start: Instant, timeout: Duration) -> Duration {
    timeout.saturating_sub(start.elapsed())
}

impl SpanSink for TeeSink {
    fn on_end(&self, span: SpanData) {
        let Some((last, rest)) = self.sinks.split_last() else {
            return;
        };
        for sink in rest {
            sink.on_end(span.clone());
        }
        last.on_end(span);
    }

    /// One deadline for all: each sink gets what the ones before it left.
    fn force_flush(&self, timeout: Duration) -> bool {
        let start = Instant::now();
        let mut all = true;
        for sink in &self.sinks {
            all &= sink.force_flush(left(start, timeout));
        }
        all
    }

    fn shutdown(&self, timeout: Duration) {
        let start = Instant::now();
        for sink in &self.sinks {
            sink.shutdown(left(start, timeout));
        }
    }

    /// The sinks flush one after another.
    fn flush_bound(&self) -> Duration {
        (self.sinks.iter()).fold(Duration::ZERO, |sum, s| sum.saturating_add(s.flush_bound()))
    }

    fn has_pending(&self) -> bool {
        self.sinks.iter().any(|s| s.has_pending())
    }

    /// Spans some sink dropped, each counted once: the most any one dropped
    /// (a span two sinks dropped is one span lost, not two).
    fn dropped_count(&self) -> u64 {
        (self.sinks.iter())
            .map(|s| s.dropped_count())
            .max()
            .unwrap_or(0)
    }

    fn take_warnings(&self) -> Vec<SinkWarning> {
        self.sinks.iter().flat_map(|s| s.take_warnings()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::memory::MemorySink;

    #[test]
    fn every_sink_gets_every_span() {
        let a = Arc::new(MemorySink::new());
        let b = Arc::new(MemorySink::new());
        let tee = TeeSink::new(vec![a.clone(), b.clone()]);
        for name in ["one", "two"] {
            tee.on_end(SpanData::bare(name, 1, 2));
        }
        assert!(tee.force_flush(Duration::from_secs(1)));
        for sink in [&a, &b] {
            let names: Vec<String> = sink.spans().into_iter().map(|s| s.name).collect();
            assert_eq!(names, ["one", "two"]);
        }
        tee.shutdown(Duration::from_secs(1));
        assert_eq!(tee.dropped_count(), 0);
    }

    struct Dropping(u64);

    impl SpanSink for Dropping {
        fn on_end(&self, _span: SpanData) {}
        fn force_flush(&self, _timeout: Duration) -> bool {
            true
        }
        fn shutdown(&self, _timeout: Duration) {}
        fn dropped_count(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn a_span_two_sinks_dropped_counts_once() {
        let tee = TeeSink::new(vec![Arc::new(Dropping(3)), Arc::new(Dropping(5))]);
        assert_eq!(tee.dropped_count(), 5);
    }
}
