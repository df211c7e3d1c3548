//! Sinks that must deliver before the process ends (OTLP, console), by id.
//!
//! Flushing and shutting down go through here rather than through a
//! `NativeTracer` method: napi-rs keeps an instance borrowed while an
//! async result of one of its `&mut self` methods is pending, so every
//! callback made during a `forceFlush()` would fail. And the exit path reaches
//! the sinks of plugins the program has already let go of (and the garbage
//! collector taken), whose queued spans would otherwise be lost.
//!
//! Memory stays bounded by the plugins created: an entry leaves at
//! `shutdown()`, or with the process.

use super::tasks::{flush_all, flush_one};
use super::worker;
use crate::trace::sink::SpanSink;
use napi::bindgen_prelude::Object;
use napi::{Env, Result};
use napi_derive::napi;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

struct Entry {
    id: u32,
    sink: Arc<dyn SpanSink>,
    exit_timeout: Duration,
}

static SINKS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u32> = Mutex::new(1);

fn sinks() -> MutexGuard<'static, Vec<Entry>> {
    SINKS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Registers a sink; its id is never 0 (0 means "nothing to deliver").
pub fn register(sink: Arc<dyn SpanSink>, exit_timeout: Duration) -> u32 {
    let id = {
        let mut next = NEXT_ID.lock().unwrap_or_else(|p| p.into_inner());
        let id = *next;
        *next = next.wrapping_add(1).max(1);
        id
    };
    sinks().push(Entry {
        id,
        sink,
        exit_timeout,
    });
    id
}

fn find(id: u32) -> Option<Arc<dyn SpanSink>> {
    sinks().iter().find(|e| e.id == id).map(|e| e.sink.clone())
}

fn take(id: u32) -> Option<Arc<dyn SpanSink>> {
    let mut all = sinks();
    let i = all.iter().position(|e| e.id == id)?;
    Some(all.swap_remove(i).sink)
}

/// Resolves once every span the sink was handed so far was answered.
#[napi(ts_return_type = "Promise<void>")]
pub fn flush_sink(env: &Env, id: u32) -> Result<Object<'_>> {
    flush_one(env, find(id), false)
}

/// Flushes and stops the sink, and forgets it. Idempotent.
#[napi(ts_return_type = "Promise<void>")]
pub fn shutdown_sink(env: &Env, id: u32) -> Result<Object<'_>> {
    flush_one(env, take(id), true)
}

/// True when some sink still has spans waiting for delivery.
#[napi]
pub fn sinks_pending() -> bool {
    sinks().iter().any(|e| e.sink.has_pending())
}

/// The exit budget left after `spent_millis`: the longest
/// `exitFlushTimeoutMillis` of the sinks `of` holds (all of them: the rule
/// both exit paths share), less what was spent.
fn exit_budget_left(of: &[Entry], spent_millis: f64) -> Duration {
    let budget = of.iter().map(|e| e.exit_timeout).max().unwrap_or_default();
    let spent =
        Duration::try_from_secs_f64(spent_millis.max(0.0) / 1000.0).unwrap_or(Duration::MAX);
    budget.saturating_sub(spent)
}

/// Flushes every sink with pending spans, off the JavaScript thread (the
/// `beforeExit` path: the event loop ran dry, delivery keeps it alive), for
/// what is left of the exit budget once `spent_millis` (since the first
/// `beforeExit` that found spans pending) are gone: a program that ends
/// while its collector is down ends within `exitFlushTimeoutMillis`, as
/// one that calls `process.exit()` does. `null` when nothing is left.
#[napi(ts_return_type = "Promise<void> | null")]
pub fn flush_pending_sinks(env: &Env, spent_millis: f64) -> Result<Option<Object<'_>>> {
    let (pending, left) = {
        let all = sinks();
        let pending: Vec<_> = (all.iter())
            .filter(|e| e.sink.has_pending())
            .map(|e| e.sink.clone())
            .collect();
        (pending, exit_budget_left(&all, spent_millis))
    };
    if pending.is_empty() || left.is_zero() {
        return Ok(None);
    }
    flush_all(env, pending, left).map(Some)
}

/// The `process.on('exit')` path: stops every sink, delivering what is queued
/// within the longest `exitFlushTimeoutMillis` of their plugins, less the
/// `spent_millis` the `beforeExit` flushes already took. Blocks the
/// JavaScript thread, which has nothing left to do.
#[napi]
pub fn shutdown_all_sinks_sync(spent_millis: f64) {
    worker::barrier();
    let all: Vec<Entry> = std::mem::take(&mut *sinks());
    let deadline = Instant::now() + exit_budget_left(&all, spent_millis);
    for e in all {
        e.sink
            .shutdown(deadline.saturating_duration_since(Instant::now()));
    }
}
