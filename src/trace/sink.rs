//! Where the span model hands every ended span. Implemented by the
//! exporters (`crate::export`); declared here, beside the model that calls it,
//! so dependencies point one way.

use super::span::SpanData;
use std::time::Duration;

/// Receives every ended span. `on_end` runs on the thread the span model runs
/// on and must stay cheap: the heavy work (rendering conversation JSON,
/// compression, I/O) belongs on a sink's own thread.
pub trait SpanSink: Send + Sync {
    fn on_end(&self, span: SpanData);
    /// Blocks (off the span model's thread) until every span handed over so far
    /// was exported and answered, or `timeout` passed. True when all were.
    fn force_flush(&self, timeout: Duration) -> bool;
    /// Flushes within `timeout` and stops; later spans are dropped. Idempotent.
    fn shutdown(&self, timeout: Duration);
    /// The longest `force_flush` can take to see every span handed over so
    /// far answered or given up on: how long `forceFlush()` waits.
    fn flush_bound(&self) -> Duration {
        Duration::from_secs(60)
    }
    /// Spans handed over and not yet answered, for sinks that deliver
    /// asynchronously (the exit path waits for them).
    fn has_pending(&self) -> bool {
        false
    }
    /// Spans dropped by a full queue or an export that gave up.
    fn dropped_count(&self) -> u64 {
        0
    }
    /// Warnings the sink raised since the last call, for `process.emitWarning`
    /// (one per kind of problem; secrets already scrubbed).
    fn take_warnings(&self) -> Vec<SinkWarning> {
        Vec::new()
    }
}

/// A warning for the user, and the kind of problem it is: tracing.md warns
/// "once per process for each kind of problem", whatever the details (a
/// collector's answer, an endpoint) its text carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkWarning {
    pub kind: String,
    pub text: String,
}
