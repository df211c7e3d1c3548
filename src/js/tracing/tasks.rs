//! Flush and shutdown waits run on the libuv pool: a real sink may block on
//! the network (never on a callback's hot path).

use crate::trace::sink::SpanSink;
use napi::{Env, Result, Task};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct FlushTask {
    /// `None`: nothing to deliver (an unknown or already stopped sink).
    pub sink: Option<Arc<dyn SpanSink>>,
    pub timeout: Duration,
    /// Shut the sink down after flushing.
    pub shutdown: bool,
}

impl Task for FlushTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        match (&self.sink, self.shutdown) {
            (Some(sink), true) => sink.shutdown(self.timeout),
            (Some(sink), false) => {
                sink.force_flush(self.timeout);
            }
            (None, _) => {}
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
    }
}

/// Flushes several sinks within one shared deadline.
pub struct FlushAllTask {
    pub sinks: Vec<Arc<dyn SpanSink>>,
    pub timeout: Duration,
}

impl Task for FlushAllTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.timeout;
        for sink in &self.sinks {
            sink.force_flush(deadline.saturating_duration_since(Instant::now()));
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
    }
}
