//! The thread the span model runs on, for every tracer of the process.
//!
//! The JavaScript thread only hands over batches of callback records
//! (records.rs); decoding them, building spans and encoding them for the
//! sink happen here, in order, while ADK goes on. That takes the span
//! model's work (about half of what tracing cost the JavaScript thread, and
//! several times its warm cost there, between ADK's own work) off the
//! thread the application runs on. What must answer at once (trace ids,
//! counts, finished spans for tests) is a `call`: it waits for the jobs
//! handed over before it, so it sees every callback made so far.
//!
//! Each tracer's state lives in this thread's registry (state.rs). The
//! queue is bounded: a JavaScript thread that outruns this one waits.
//! Should the thread not start, or stop, jobs run where they are handed
//! over instead, so tracing goes on, on the JavaScript thread.

use napi::{Error, Result, Status};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;

type Job = Box<dyn FnOnce() + Send>;

/// Jobs the queue holds before a sender waits: a batch is a run's records
/// or 5 ms of them, at most 4 MiB of long strings (lib/tracing/records.js),
/// so this bounds the memory waiting here too.
const QUEUE: usize = 64;

static WORKER: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();

fn worker() -> Option<&'static SyncSender<Job>> {
    WORKER
        .get_or_init(|| {
            let (tx, rx) = sync_channel::<Job>(QUEUE);
            std::thread::Builder::new()
                .name("adk-tracing".into())
                .spawn(move || {
                    for job in rx {
                        // A panicking job must not stop every tracer.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Runs `job` on the tracing thread, after every job handed over before.
pub fn submit(job: impl FnOnce() + Send + 'static) {
    let job: Job = Box::new(job);
    let job = match worker() {
        Some(tx) => match tx.send(job) {
            Ok(()) => return,
            Err(unsent) => unsent.0,
        },
        None => job,
    };
    job();
}

/// Runs `f` on the tracing thread after every job handed over before it,
/// and waits for its answer.
pub fn call<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = sync_channel(1);
    submit(move || {
        let _ = tx.send(f());
    });
    rx.recv().map_err(|_| {
        Error::new(
            Status::GenericFailure,
            "TracingPlugin: the tracing thread did not answer",
        )
    })
}

/// Waits until every job handed over so far has run (a sink flush must
/// find the spans of every callback made before it).
pub fn barrier() {
    let _ = call(|| ());
}
