//! The `console` exporter: buffers each trace's spans and, when the trace's
//! root span ends (ADK ends the root last), prints the whole trace as an
//! indented tree — the picture a developer looks at while building an agent.
//!
//! Memory is bounded: buffered spans are reduced to a few small fields (no
//! payloads), and caps on traces and spans evict the oldest unfinished trace
//! (a root that never comes must not leak), counting what was dropped.
//! Printing is one synchronous write at root end; console output is a
//! development tool, and formatting a trace costs microseconds.

mod render;
mod style;

pub use render::{render_trace, ConsoleSpan, TraceNotes, LINE_WIDTH};
pub use style::color_enabled;

use crate::trace::sink::SpanSink;
use crate::trace::span::SpanData;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Caps on what the sink holds while waiting for root spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsoleLimits {
    /// Unfinished traces buffered at once; the oldest is evicted beyond it.
    pub max_traces: usize,
    /// Spans buffered across all traces; oldest traces are evicted beyond it.
    pub max_spans: usize,
    /// Spans kept for one trace; later ones are counted and not shown.
    pub max_spans_per_trace: usize,
}

impl Default for ConsoleLimits {
    fn default() -> Self {
        ConsoleLimits {
            max_traces: 128,
            max_spans: 8192,
            max_spans_per_trace: 1024,
        }
    }
}

/// Traces printed recently, so a span that ends after its root (it should
/// not happen) is dropped instead of opening a buffer that never completes.
const RECENT_TRACES: usize = 64;

#[derive(Default)]
struct TraceBuffer {
    spans: Vec<ConsoleSpan>,
    omitted: u64,
}

#[derive(Default)]
struct State {
    traces: HashMap<[u8; 16], TraceBuffer>,
    /// Trace ids in first-seen order (eviction order).
    order: VecDeque<[u8; 16]>,
    recent: VecDeque<[u8; 16]>,
    buffered_spans: usize,
    /// Evictions not yet mentioned in the output: (traces, spans).
    unreported: (u64, u64),
    evicted_traces: u64,
    dropped_spans: u64,
    shut_down: bool,
}

impl State {
    fn open_trace(&mut self, id: [u8; 16]) {
        if let Entry::Vacant(e) = self.traces.entry(id) {
            e.insert(TraceBuffer::default());
            self.order.push_back(id);
        }
    }
}

pub struct ConsoleSink {
    state: Mutex<State>,
    out: Mutex<Box<dyn Write + Send>>,
    color: bool,
    limits: ConsoleLimits,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ConsoleSink {
    /// Prints to the process's stdout. `color`: see [`color_enabled`].
    pub fn new(color: bool) -> Self {
        Self::with_writer(Box::new(std::io::stdout()), color)
    }

    /// Prints to any writer (tests, files).
    pub fn with_writer(out: Box<dyn Write + Send>, color: bool) -> Self {
        ConsoleSink {
            state: Mutex::new(State::default()),
            out: Mutex::new(out),
            color,
            limits: ConsoleLimits::default(),
        }
    }

    /// Replaces the default caps (each is at least 1).
    pub fn with_limits(mut self, limits: ConsoleLimits) -> Self {
        self.limits = ConsoleLimits {
            max_traces: limits.max_traces.max(1),
            max_spans: limits.max_spans.max(1),
            max_spans_per_trace: limits.max_spans_per_trace.max(1),
        };
        self
    }

    /// Unfinished traces evicted by the caps so far.
    pub fn evicted_trace_count(&self) -> u64 {
        lock(&self.state).evicted_traces
    }

    /// Traces buffered now, waiting for their root span.
    pub fn buffered_trace_count(&self) -> usize {
        lock(&self.state).traces.len()
    }

    /// Spans buffered now.
    pub fn buffered_span_count(&self) -> usize {
        lock(&self.state).buffered_spans
    }

    fn write(&self, text: &str) {
        let mut out = lock(&self.out);
        // A closed stdout (EPIPE) must not break the user's run.
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// The line telling the reader that unfinished traces were dropped.
    fn eviction_note(state: &mut State, color: bool) -> String {
        let (traces, spans) = std::mem::take(&mut state.unreported);
        let mut out = String::new();
        if traces > 0 {
            let text = format!(
                "(console exporter: {traces} unfinished trace(s) dropped, {spans} span(s); \
                 their root spans never ended)"
            );
            render::push_note(&mut out, &text, color);
        }
        out
    }

    fn evict_oldest(&self, state: &mut State, keep: &[u8; 16]) -> bool {
        let Some(pos) = state.order.iter().position(|id| id != keep) else {
            return false;
        };
        let Some(id) = state.order.remove(pos) else {
            return false;
        };
        if let Some(buf) = state.traces.remove(&id) {
            let n = buf.spans.len() as u64;
            state.buffered_spans -= buf.spans.len();
            state.evicted_traces += 1;
            state.dropped_spans += n + buf.omitted;
            state.unreported.0 += 1;
            state.unreported.1 += n + buf.omitted;
        }
        true
    }

    fn buffer(&self, state: &mut State, span: &SpanData) {
        let id = span.trace_id;
        if state.recent.contains(&id) {
            state.dropped_spans += 1;
            return;
        }
        if !state.traces.contains_key(&id) {
            while state.traces.len() >= self.limits.max_traces {
                if !self.evict_oldest(state, &id) {
                    break;
                }
            }
            state.open_trace(id);
        }
        while state.buffered_spans >= self.limits.max_spans {
            if !self.evict_oldest(state, &id) {
                break;
            }
        }
        let full = state.buffered_spans >= self.limits.max_spans;
        let Some(buf) = state.traces.get_mut(&id) else {
            return;
        };
        if full || buf.spans.len() >= self.limits.max_spans_per_trace {
            buf.omitted += 1;
            state.dropped_spans += 1;
            return;
        }
        buf.spans.push(ConsoleSpan::from_span(span));
        state.buffered_spans += 1;
    }

    /// Takes a trace out of the buffer and renders it.
    fn take_rendered(&self, state: &mut State, id: &[u8; 16], incomplete: bool) -> String {
        let buf = state.traces.remove(id).unwrap_or_default();
        state.buffered_spans -= buf.spans.len();
        state.order.retain(|t| t != id);
        let notes = TraceNotes {
            omitted_spans: buf.omitted,
            incomplete,
        };
        render_trace(id, &buf.spans, notes, self.color)
    }
}

impl SpanSink for ConsoleSink {
    fn on_end(&self, span: SpanData) {
        let text = {
            let mut state = lock(&self.state);
            if state.shut_down {
                state.dropped_spans += 1;
                return;
            }
            // A run that joined the application's span tops its tree too.
            if span.parent_span_id.is_some() && !span.remote_parent {
                self.buffer(&mut state, &span);
                return;
            }
            let id = span.trace_id;
            // The root is always kept, whatever the caps, so the tree has its top.
            state.open_trace(id);
            if let Some(buf) = state.traces.get_mut(&id) {
                buf.spans.push(ConsoleSpan::from_span(&span));
                state.buffered_spans += 1;
            }
            if state.recent.len() >= RECENT_TRACES {
                state.recent.pop_front();
            }
            state.recent.push_back(id);
            let mut text = Self::eviction_note(&mut state, self.color);
            text.push_str(&self.take_rendered(&mut state, &id, false));
            text
        };
        // Written outside the state lock: a slow terminal never blocks
        // buffering on another thread.
        self.write(&text);
    }

    fn force_flush(&self, _timeout: Duration) -> bool {
        let _ = lock(&self.out).flush();
        true
    }

    /// Prints what is still buffered (traces whose root never ended) so the
    /// developer sees them, then drops later spans.
    fn shutdown(&self, _timeout: Duration) {
        let text = {
            let mut state = lock(&self.state);
            if state.shut_down {
                return;
            }
            state.shut_down = true;
            let mut text = Self::eviction_note(&mut state, self.color);
            let ids: Vec<[u8; 16]> = state.order.iter().copied().collect();
            for id in ids {
                text.push_str(&self.take_rendered(&mut state, &id, true));
            }
            text
        };
        if !text.is_empty() {
            self.write(&text);
        }
    }

    fn dropped_count(&self) -> u64 {
        lock(&self.state).dropped_spans
    }
}

#[cfg(test)]
mod tests;
