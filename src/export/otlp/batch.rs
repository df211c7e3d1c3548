//! The batching exporter thread and the bounded queue that feeds it.
//!
//! Every accepted span gets a sequence number (implicitly: the queue holds a
//! contiguous run of them). `done_seq` is the first span not yet finished
//! (exported, answered, or given up on); a flush waits for it to pass the
//! count of spans accepted when the flush began.

use super::encode::{partial_success, Body, Encoder};
use super::give_back::GiveBack;
use super::http::{Outcome, Transport};
use super::prepared::PreparedSpan;
use super::warn::Warnings;
use crate::export::config::{display_url, OtlpConfig};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub struct Shared {
    state: Mutex<State>,
    /// The worker waits here: new spans, flush requests, shutdown.
    work: Condvar,
    /// Flushers and shutdown wait here for progress.
    progress: Condvar,
    pub dropped: AtomicU64,
    /// Times the worker woke up (tests check that an idle worker sleeps).
    pub wakeups: AtomicU64,
    overflowed: AtomicBool,
    pub warnings: Warnings,
    max_queue_size: usize,
    max_batch: usize,
    /// Every batch a flush can wait for (a full queue and the one in flight),
    /// each given up on after exportTimeoutMillis.
    pub flush_bound: Duration,
    /// The last exported batch, for the span model's thread to free.
    pub(super) given_back: GiveBack,
}

#[derive(Default)]
struct State {
    queue: VecDeque<PreparedSpan>,
    /// Spans accepted so far.
    next_seq: u64,
    /// First sequence number of the batch being exported.
    in_flight_start: Option<u64>,
    /// Export without waiting for the schedule up to this sequence number.
    flush_target: u64,
    /// When the pending spans started waiting for the scheduled export.
    pending_since: Option<Instant>,
    shutdown: bool,
    /// Shutdown's time is up: stop retrying, drop what is left, exit.
    abandon: bool,
    exited: bool,
}

impl State {
    fn front_seq(&self) -> u64 {
        self.next_seq - self.queue.len() as u64
    }
    fn done_seq(&self) -> u64 {
        self.in_flight_start.unwrap_or_else(|| self.front_seq())
    }
}

/// A flush waits for at most a full queue's batches and the one in flight;
/// each ends within exportTimeoutMillis (a second more for the last answer
/// to be read and the batch after it to start).
fn flush_bound(config: &OtlpConfig) -> Duration {
    let queue = config.max_queue_size.max(1);
    let batch = config.max_export_batch_size.clamp(1, queue);
    let batches = queue.div_ceil(batch) as u32 + 1;
    let per_batch =
        Duration::from_millis(config.export_timeout_millis.max(1)) + Duration::from_secs(1);
    per_batch.saturating_mul(batches)
}

impl Shared {
    pub fn new(config: &OtlpConfig) -> Self {
        Shared {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            progress: Condvar::new(),
            dropped: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            warnings: Warnings::new(config),
            max_queue_size: config.max_queue_size.max(1),
            max_batch: config
                .max_export_batch_size
                .clamp(1, config.max_queue_size.max(1)),
            flush_bound: flush_bound(config),
            given_back: GiveBack::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing here panics while holding the lock; survive it anyway.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The span model thread's part: a lock, a push, rarely a wake-up.
    pub fn push(&self, span: PreparedSpan) {
        let mut st = self.lock();
        if st.shutdown {
            return;
        }
        if st.queue.len() >= self.max_queue_size {
            st.queue.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.overflowed.store(true, Ordering::Relaxed);
        }
        let was_empty = st.queue.is_empty();
        st.queue.push_back(span);
        st.next_seq += 1;
        if was_empty {
            st.pending_since = Some(Instant::now());
        }
        // Wake the worker only when it has something new to decide.
        let wake = was_empty || st.queue.len() == self.max_batch;
        drop(st);
        if wake {
            self.work.notify_one();
        }
        // Exported spans this thread made are freed here (give_back.rs).
        drop(self.given_back.take());
    }

    /// Waits until every span accepted so far is finished, or `deadline`.
    pub fn flush(&self, deadline: Instant) -> bool {
        let mut st = self.lock();
        let target = st.next_seq;
        if st.done_seq() >= target {
            return true;
        }
        st.flush_target = st.flush_target.max(target);
        self.work.notify_one();
        self.wait_progress(st, deadline, |st| st.done_seq() >= target)
    }

    fn wait_progress(
        &self,
        mut st: MutexGuard<'_, State>,
        deadline: Instant,
        done: impl Fn(&State) -> bool,
    ) -> bool {
        while !done(&st) {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self
                .progress
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        true
    }

    /// Spans accepted and not yet answered (queued or in flight).
    pub fn has_pending(&self) -> bool {
        let st = self.lock();
        !st.exited && st.done_seq() < st.next_seq
    }

    /// Starts shutting down; false when an earlier call already did.
    pub fn begin_shutdown(&self) -> bool {
        let mut st = self.lock();
        if st.shutdown {
            return false;
        }
        st.shutdown = true;
        drop(st);
        self.work.notify_one();
        true
    }

    /// Shutdown's second half: flush until `deadline`, then make the worker
    /// give up; true once the worker has exited.
    pub fn finish_shutdown(&self, deadline: Instant) -> bool {
        let st = self.lock();
        let flushed = self.wait_progress(st, deadline, |st| {
            st.exited || st.queue.is_empty() && st.in_flight_start.is_none()
        });
        let mut st = self.lock();
        if !flushed {
            st.abandon = true;
            self.work.notify_one();
        }
        // A worker stuck in a hanging request is left behind, not waited for.
        self.wait_progress(st, deadline.max(Instant::now()), |st| st.exited)
    }
}

/// The exporter thread.
pub struct Worker {
    shared: std::sync::Arc<Shared>,
    encoder: Encoder,
    transport: Transport,
    endpoint: String,
    delay: Duration,
    export_timeout: Duration,
    /// What set `export_timeout`, as warnings name it.
    export_timeout_name: &'static str,
    request_timeout: Duration,
    backoff: Backoff,
}

impl Worker {
    pub fn new(shared: std::sync::Arc<Shared>, config: &OtlpConfig) -> Self {
        Worker {
            shared,
            encoder: Encoder::new(config),
            transport: Transport::new(config),
            endpoint: display_url(&config.endpoint),
            delay: Duration::from_millis(config.scheduled_delay_millis),
            export_timeout: Duration::from_millis(config.export_timeout_millis.max(1)),
            export_timeout_name: config
                .export_timeout_from_env
                .unwrap_or("exportTimeoutMillis"),
            request_timeout: Duration::from_millis(config.request_timeout_millis.max(1)),
            backoff: Backoff::new(
                config.retry_initial_backoff_millis,
                config.retry_max_backoff_millis,
            ),
        }
    }

    pub fn run(mut self) {
        while let Some(batch) = self.next_batch() {
            self.warn_overflow();
            let n = batch.len() as u64;
            // A panic while encoding (a foreign deferred value) costs the batch only.
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.export(batch)));
            if result.is_err() {
                self.drop_spans(n);
                self.shared.warnings.once(
                    "panic",
                    format!(
                        "TracingPlugin: encoding spans failed unexpectedly; {}.",
                        dropped_phrase(n)
                    ),
                );
            }
            let mut st = self.shared.lock();
            st.in_flight_start = None;
            drop(st);
            self.shared.progress.notify_all();
        }
        // Exiting: nothing stays held for the span model's thread, which may
        // end no span again (a plugin kept after shutdown).
        drop(self.shared.given_back.take());
        let mut st = self.shared.lock();
        if st.abandon {
            let left = st.queue.len() as u64;
            st.queue.clear();
            self.drop_spans(left);
        }
        st.exited = true;
        drop(st);
        self.shared.progress.notify_all();
        self.warn_overflow();
    }

    /// Called without the state lock: a warning hook may take its time.
    fn warn_overflow(&self) {
        if self.shared.overflowed.swap(false, Ordering::Relaxed) {
            self.shared.warnings.once(
                "overflow",
                format!(
                    "TracingPlugin: the span export queue is full (maxQueueSize {}); the oldest \
spans are dropped. Raise batch.maxQueueSize or check that the collector at {} keeps up.",
                    self.shared.max_queue_size, self.endpoint
                ),
            );
        }
    }

    /// Blocks until a batch is due; `None` when the worker should exit.
    /// Sleeps without a timeout while the queue is empty.
    fn next_batch(&mut self) -> Option<Vec<PreparedSpan>> {
        let shared = std::sync::Arc::clone(&self.shared);
        let mut st = shared.lock();
        loop {
            shared.wakeups.fetch_add(1, Ordering::Relaxed);
            if st.abandon {
                return None;
            }
            let now = Instant::now();
            let due = st.pending_since.map(|t| t + self.delay);
            if !st.queue.is_empty() {
                let ready = st.queue.len() >= shared.max_batch
                    || st.flush_target > st.front_seq()
                    || st.shutdown
                    || due.is_some_and(|d| d <= now);
                if ready {
                    break;
                }
            } else if st.shutdown {
                return None;
            }
            if st.queue.is_empty() {
                // Going idle: nothing stays held for the span model's thread.
                if let Some(back) = shared.given_back.take() {
                    drop(st);
                    drop(back);
                    st = shared.lock();
                    continue;
                }
            }
            st = match due.filter(|_| !st.queue.is_empty()) {
                Some(d) => {
                    shared
                        .work
                        .wait_timeout(st, d.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => shared.work.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
        let n = st.queue.len().min(shared.max_batch);
        st.in_flight_start = Some(st.front_seq());
        let batch: Vec<PreparedSpan> = st.queue.drain(..n).collect();
        // The rest waits a full delay again unless a batch fills up first.
        st.pending_since = (!st.queue.is_empty()).then(Instant::now);
        Some(batch)
    }

    fn drop_spans(&self, n: u64) {
        if n > 0 {
            self.shared.dropped.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Delivers one batch within `export_timeout`, retrying what is worth it.
    fn export(&mut self, batch: Vec<PreparedSpan>) {
        let n = batch.len() as u64;
        let give_up_at = Instant::now() + self.export_timeout;
        let body = self.encoder.body(&batch);
        // The spans go back to the thread that made them, now, not after the
        // retries; one it did not take in time is freed here.
        drop(self.shared.given_back.put(batch));
        self.deliver(&body, n, give_up_at);
        self.encoder.recycle(body);
    }

    /// Sends `body` (`n` spans) until it is delivered, rejected, or
    /// `give_up_at`, counting the spans it could not deliver as dropped.
    fn deliver(&mut self, body: &Body, n: u64, give_up_at: Instant) {
        let mut attempt: u32 = 0;
        loop {
            let now = Instant::now();
            let left = give_up_at.saturating_duration_since(now);
            let outcome = if left.is_zero() {
                Outcome::Retryable {
                    reason: "no time left".into(),
                    retry_after: None,
                }
            } else {
                self.transport.send(body, left.min(self.request_timeout))
            };
            match outcome {
                Outcome::Delivered { body } => {
                    if let Some((rejected, message)) = partial_success(&body) {
                        let rejected = u64::try_from(rejected).unwrap_or(0).min(n);
                        self.drop_spans(rejected);
                        self.shared.warnings.once(
                            "partial",
                            format!(
                                "TracingPlugin: the OTLP collector at {} rejected {rejected} of {n} \
spans: {}",
                                self.endpoint,
                                if message.is_empty() {
                                    "no reason given".to_string()
                                } else {
                                    self.shared.warnings.quote(&message)
                                }
                            ),
                        );
                    }
                    return;
                }
                Outcome::Rejected { status, body } => {
                    self.drop_spans(n);
                    let said = if body.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", self.shared.warnings.quote(&body))
                    };
                    self.shared.warnings.once(
                        &format!("status-{status}"),
                        format!(
                            "TracingPlugin: the OTLP collector at {} answered HTTP {status}{said}. \
{}; this answer is not retried.",
                            self.endpoint,
                            dropped_phrase(n)
                        ),
                    );
                    return;
                }
                Outcome::Failed { reason } => {
                    self.drop_spans(n);
                    self.shared.warnings.once(
                        "failed",
                        format!(
                            "TracingPlugin: exporting spans to {} failed: {reason}. {}.",
                            self.endpoint,
                            dropped_phrase(n)
                        ),
                    );
                    return;
                }
                Outcome::Retryable {
                    reason,
                    retry_after,
                } => {
                    attempt += 1;
                    let backoff = self.backoff.delay(attempt);
                    let wait = retry_after.map_or(backoff, |r| r.max(backoff));
                    if Instant::now() + wait >= give_up_at || !self.sleep(wait) {
                        self.drop_spans(n);
                        self.shared.warnings.once(
                            "gave-up",
                            format!(
                                "TracingPlugin: could not deliver spans to the OTLP collector at {} \
within {} ({} ms, {attempt} attempt{}; last: {reason}). {}.",
                                self.endpoint,
                                self.export_timeout_name,
                                self.export_timeout.as_millis(),
                                if attempt == 1 { "" } else { "s" },
                                dropped_phrase(n)
                            ),
                        );
                        return;
                    }
                }
            }
        }
    }

    /// Sleeps `wait` unless shutdown gives up on us first (then false).
    fn sleep(&self, wait: Duration) -> bool {
        let until = Instant::now() + wait;
        let mut st = self.shared.lock();
        loop {
            if st.abandon {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            st = self
                .shared
                .work
                .wait_timeout(st, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

fn dropped_phrase(n: u64) -> String {
    if n == 1 {
        "1 span was dropped".to_string()
    } else {
        format!("{n} spans were dropped")
    }
}

/// Exponential backoff with ±20 % jitter.
struct Backoff {
    initial: Duration,
    max: Duration,
    rng: u64,
}

impl Backoff {
    fn new(initial_ms: u64, max_ms: u64) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Backoff {
            initial: Duration::from_millis(initial_ms),
            max: Duration::from_millis(max_ms.max(initial_ms)),
            rng: seed | 1,
        }
    }

    fn delay(&mut self, attempt: u32) -> Duration {
        let exp = self
            .initial
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16))
            .min(self.max);
        // xorshift64: jitter needs spread, not cryptographic randomness.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let factor = 0.8 + (self.rng % 1000) as f64 / 2500.0;
        exp.mul_f64(factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_waits_for_every_batch_a_full_queue_holds() {
        // api.md: forceFlush resolves once every span was answered or given
        // up on; exportTimeoutMillis bounds each batch, not the flush.
        let mut c = OtlpConfig::with_endpoint("http://127.0.0.1:4318/v1/traces");
        c.export_timeout_millis = 120_000;
        c.max_queue_size = 2048;
        c.max_export_batch_size = 512;
        // Four queued batches and the one in flight, 121 s each.
        assert_eq!(flush_bound(&c), Duration::from_secs(5 * 121));
        c.max_export_batch_size = 4096;
        assert_eq!(flush_bound(&c), Duration::from_secs(2 * 121));
        assert_eq!(Shared::new(&c).flush_bound, Duration::from_secs(2 * 121));
    }

    #[test]
    fn backoff_grows_with_jitter_and_caps() {
        let mut b = Backoff::new(100, 1000);
        let d1 = b.delay(1);
        assert!(
            d1 >= Duration::from_millis(80) && d1 < Duration::from_millis(120),
            "{d1:?}"
        );
        let d3 = b.delay(3);
        assert!(
            d3 >= Duration::from_millis(320) && d3 < Duration::from_millis(480),
            "{d3:?}"
        );
        let d9 = b.delay(9);
        assert!(
            d9 >= Duration::from_millis(800) && d9 < Duration::from_millis(1200),
            "{d9:?}"
        );
        let d99 = b.delay(99);
        assert!(d99 < Duration::from_millis(1200), "{d99:?}");
    }
}
