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
//! A hand-over does not wake this thread. Waking a sleeping thread is a
//! futex call that, on the virtual machines applications run on, cost the
//! JavaScript thread 22–54 µs (median; 70–125 µs p90), against 0.5–1 µs for
//! the hand-over itself: more than the rest of a run's tracing there. So
//! while work comes, this thread looks for it every 5 to 40 ms (about a
//! millisecond of work at a time, see MIN_POLL); only after IDLE of nothing
//! does it sleep until woken, and then the next hand-over wakes it. A
//! `call` always wakes it: its caller waits for the answer.
//!
//! Each tracer's state lives in this thread's registry (state.rs). The
//! queue is bounded: a JavaScript thread that outruns this one waits.
//! Should the thread not start, jobs run where they are handed over
//! instead, so tracing goes on, on the JavaScript thread.

use napi::{Error, Result, Status};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// Jobs the queue holds before a sender waits: a batch is a run's records
/// or 5 ms of them, at most 4 MiB of long strings (lib/tracing/records.js),
/// so this bounds the memory waiting here too.
const QUEUE: usize = 64;
/// How soon the thread looks for jobs again after taking some, at the
/// least and at the most. A timed wake costs this thread about 40 µs of CPU
/// on such machines. Light streams (10,000 back-to-back runs of 5 spans:
/// a batch every 5 ms, a fifth of a millisecond of work) paid that for
/// every batch when looked for every 5 ms, 6 µs per run; for heavy ones
/// (a batch filled every few ms) a long wait leaves more work for whoever
/// flushes to wait for. So the wait is set for about WORK_PER_LOOK of work
/// to have come by the next look, from the rate the last look found.
const MIN_POLL: Duration = Duration::from_millis(5);
const MAX_POLL: Duration = Duration::from_millis(40);
const WORK_PER_LOOK: Duration = Duration::from_millis(1);
/// Nothing for this long (the empty looks' waits added up, doubling from
/// MIN_POLL), the thread sleeps until a hand-over wakes it: an idle process
/// spends no CPU here.
const IDLE: Duration = Duration::from_millis(100);

/// The wait before the next look, when `work` came in `gap`.
fn next_wait(gap: Duration, work: Duration) -> Duration {
    let scale = WORK_PER_LOOK.as_secs_f64() / work.as_secs_f64().max(1e-6);
    gap.mul_f64(scale.min(1e3)).clamp(MIN_POLL, MAX_POLL)
}

struct Worker {
    jobs: Mutex<VecDeque<Job>>,
    /// Senders wait here while the queue is full.
    room: Condvar,
    thread: Thread,
    /// The thread sleeps until woken (not between looks).
    asleep: AtomicBool,
}

static WORKER: OnceLock<Option<&'static Worker>> = OnceLock::new();

fn worker() -> Option<&'static Worker> {
    *WORKER.get_or_init(|| {
        let (tx, rx) = sync_channel::<&'static Worker>(1);
        let spawned = std::thread::Builder::new()
            .name("adk-tracing".into())
            .spawn(move || {
                let Ok(w) = rx.recv() else { return };
                w.run();
            })
            .ok()?;
        // Lives as long as the process: tracers of every module instance share it.
        let w: &'static Worker = Box::leak(Box::new(Worker {
            jobs: Mutex::new(VecDeque::with_capacity(QUEUE)),
            room: Condvar::new(),
            thread: spawned.thread().clone(),
            asleep: AtomicBool::new(false),
        }));
        tx.send(w).ok()?;
        Some(w)
    })
}

impl Worker {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Job>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn run(&self) {
        let mut wait = MIN_POLL;
        let mut idle = Duration::ZERO;
        // Where the work the next look finds started to come.
        let mut since = Instant::now();
        loop {
            let start = Instant::now();
            if self.run_queued() {
                let end = Instant::now();
                wait = next_wait(start - since, end - start);
                since = end;
                idle = Duration::ZERO;
                std::thread::park_timeout(wait);
            } else if idle < IDLE {
                idle += wait;
                std::thread::park_timeout(wait);
                wait = (wait * 2).min(MAX_POLL);
            } else {
                // Asleep first, then one more look: a job pushed before this
                // store is seen by the look, one pushed after it sees
                // `asleep` and wakes the thread.
                self.asleep.store(true, Ordering::SeqCst);
                if self.lock().is_empty() {
                    std::thread::park();
                }
                self.asleep.store(false, Ordering::SeqCst);
                idle = Duration::ZERO;
                wait = MIN_POLL;
                since = Instant::now();
            }
        }
    }

    /// Runs the jobs queued, and those queued meanwhile; false if none.
    fn run_queued(&self) -> bool {
        let mut ran = false;
        loop {
            let (next, was_full) = {
                let mut jobs = self.lock();
                let full = jobs.len() >= QUEUE;
                (jobs.pop_front(), full)
            };
            let Some(job) = next else { return ran };
            if was_full {
                self.room.notify_all();
            }
            // A panicking job must not stop every tracer.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            ran = true;
        }
    }

    fn push(&self, job: Job, wake: bool) {
        let mut jobs = self.lock();
        while jobs.len() >= QUEUE {
            self.thread.unpark();
            jobs = self.room.wait(jobs).unwrap_or_else(|p| p.into_inner());
        }
        jobs.push_back(job);
        drop(jobs);
        if wake || self.asleep.load(Ordering::SeqCst) {
            self.thread.unpark();
        }
    }
}

/// Runs `job` on the tracing thread, after every job handed over before.
pub fn submit(job: impl FnOnce() + Send + 'static) {
    hand_over(job, false);
}

/// Queues `job` for the tracing thread (waking it if `wake`), or runs it
/// here when that thread could not start.
fn hand_over(job: impl FnOnce() + Send + 'static, wake: bool) {
    match worker() {
        Some(w) => w.push(Box::new(job), wake),
        None => job(),
    }
}

/// Runs `f` on the tracing thread after every job handed over before it,
/// and waits for its answer.
pub fn call<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = sync_channel(1);
    // The caller waits for the answer: the thread is woken.
    hand_over(
        move || {
            let _ = tx.send(f());
        },
        true,
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_aims_at_a_millisecond_of_work_a_look_within_its_bounds() {
        let ms = Duration::from_millis;
        // A light stream: 0.2 ms of work came in 5 ms; a millisecond comes in 25.
        assert_eq!(next_wait(ms(5), Duration::from_micros(200)), ms(25));
        // Lighter still, or nothing measurable: the longest wait.
        assert_eq!(next_wait(ms(40), Duration::from_micros(100)), MAX_POLL);
        assert_eq!(next_wait(ms(5), Duration::ZERO), MAX_POLL);
        // A heavy stream: 2 ms of work came in 5 ms; the shortest wait.
        assert_eq!(next_wait(ms(5), ms(2)), MIN_POLL);
        assert_eq!(next_wait(ms(20), ms(2)), ms(10));
    }
}
