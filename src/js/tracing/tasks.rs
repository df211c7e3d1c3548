//! Flush and shutdown waits run on the libuv pool: a real sink may block on
//! the network (never on a callback's hot path).

use crate::export::SpanSink;
use napi::{Env, Result, Task};
use std::sync::Arc;
use std::time::Duration;

pub struct FlushTask {
    pub sink: Arc<dyn SpanSink>,
    pub timeout: Duration,
    /// Shut the sink down after flushing.
    pub shutdown: bool,
}

impl Task for FlushTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        if self.shutdown {
            self.sink.shutdown(self.timeout);
        } else {
            self.sink.force_flush(self.timeout);
        }
        Ok(())
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
    }
}
