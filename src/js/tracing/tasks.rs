//! Flush and shutdown waits, each on a thread of its own, settling a promise.
//!
//! Not on the libuv pool (an `AsyncTask`): a wait may block for as long as a
//! collector hangs (up to `exportTimeoutMillis`, per batch), and the pool's
//! few threads (4 by default) also serve the application's `fs`, `dns.lookup`,
//! `zlib` and `crypto`. Four pending flushes against a slow collector would
//! stall all of those, and a flush queued behind them would not even start
//! its export (its deadline then passed long after forceFlush() was called).
//! A thread per wait costs little next to a network round trip, and none of
//! this is on a callback's hot path.

use super::worker;
use crate::trace::sink::SpanSink;
use napi::bindgen_prelude::Object;
use napi::{Env, Error, Result, Status};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `work` on a new thread; the returned promise resolves (to `undefined`)
/// when it is done. While it is pending, the promise keeps the event loop alive.
fn settle_when_done<'env>(
    env: &'env Env,
    work: impl FnOnce() + Send + 'static,
) -> Result<Object<'env>> {
    let (deferred, promise) = env.create_deferred::<(), fn(Env) -> Result<()>>()?;
    // Shared with the thread: when the spawn fails, the closure is dropped
    // unrun, and this side rejects the promise instead.
    let slot = Arc::new(std::sync::Mutex::new(Some(deferred)));
    let in_thread = Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name("adk-tracing-flush".into())
        .spawn(move || {
            // The spans of every callback made before this flush reach
            // their sinks first (the tracing thread may still hold them).
            worker::barrier();
            // A panicking sink must still settle the promise.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let taken = in_thread.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(d) = taken {
                d.resolve(|_| Ok(()));
            }
        });
    if let Err(e) = spawned {
        let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(d) = taken {
            d.reject(Error::new(
                Status::GenericFailure,
                format!("TracingPlugin: could not start a flush thread: {e}"),
            ));
        }
    }
    Ok(promise)
}

/// Flushes (and, with `shutdown`, stops) one sink, waiting until every span
/// is answered or given up on (the sink's `flush_bound`); `None`: nothing to
/// deliver (an unknown or already stopped sink), resolved at once all the same.
pub fn flush_one<'env>(
    env: &'env Env,
    sink: Option<Arc<dyn SpanSink>>,
    shutdown: bool,
) -> Result<Object<'env>> {
    settle_when_done(env, move || match (sink, shutdown) {
        (Some(sink), true) => sink.shutdown(sink.flush_bound()),
        (Some(sink), false) => {
            sink.force_flush(sink.flush_bound());
        }
        (None, _) => {}
    })
}

/// Flushes several sinks within one shared deadline.
pub fn flush_all<'env>(
    env: &'env Env,
    sinks: Vec<Arc<dyn SpanSink>>,
    timeout: Duration,
) -> Result<Object<'env>> {
    settle_when_done(env, move || {
        let deadline = Instant::now() + timeout;
        for sink in &sinks {
            sink.force_flush(deadline.saturating_duration_since(Instant::now()));
        }
    })
}
