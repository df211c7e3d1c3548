//! A tracer's state, on the tracing thread (worker.rs), by handle: the
//! callbacks' records (records.rs) and `NativeTracer`'s methods reach it
//! through a plain handle, not a class method: a napi-rs class method pays
//! for unwrapping `this` (a type-tag check) and for its native-borrow
//! registry (a global mutex and a SipHash map), measured at 340-420 ns per
//! call against 130-140 ns for a function with a handle.

use super::system_json::SystemJson;
use crate::export::memory::MemorySink;
use crate::trace::inputs::AgentInfo;
use crate::trace::model::Tracer;
use crate::trace::sink::SinkWarning;
use napi::{Error, Result, Status};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// What the tracing thread has for the JavaScript thread, read there
/// without waiting (`tracer_apply` answers with it).
#[derive(Default)]
pub struct Answers {
    /// The sink raised warnings for `take_warnings`.
    pub warned: AtomicBool,
    /// Conversation slots that could not supply a delta (JavaScript then
    /// forgets those conversations and sends them in full).
    pub refused: Mutex<Vec<u32>>,
    /// Why a batch of records could not be applied (a bug, reported once).
    pub problem: Mutex<Option<String>>,
}

impl Answers {
    pub fn bits(&self) -> u32 {
        let mut bits = 0;
        if self.warned.load(Ordering::Relaxed) {
            bits |= 1;
        }
        if !lock(&self.refused).is_empty() {
            bits |= 2;
        }
        if lock(&self.problem).is_some() {
            bits |= 4;
        }
        bits
    }
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

pub struct TracerState {
    pub tracer: Tracer,
    pub memory: Option<Arc<MemorySink>>,
    pub answers: Arc<Answers>,
    /// Sink warnings picked up after each batch, handed out by `take_warnings`
    /// (only when no `on_warning` hook delivers them as they come).
    pub pending_warnings: Vec<SinkWarning>,
    /// A bad attribute value length limit was warned about (once).
    pub limit_warned: bool,
    /// Agent trees sent once by a REGISTER_TREE record (handle = index +
    /// 1), so a run's start does not convert the whole tree again. Bounded
    /// by records.rs's `MAX_TREES`; lib/tracing.js passes the flat tree
    /// when none is free.
    pub trees: Vec<Vec<AgentInfo>>,
    /// The last string system instruction's JSON (records.rs).
    pub system_json: SystemJson,
}

pub type Shared = Rc<RefCell<TracerState>>;

thread_local! {
    /// Live tracers (on the tracing thread), by handle - 1; freed slots
    /// are reused, so the table is as long as the most tracers alive at
    /// once.
    static TRACERS: RefCell<Vec<Option<Shared>>> = const { RefCell::new(Vec::new()) };
}

/// A handle for `state` (never 0).
pub fn register(state: Shared) -> u32 {
    TRACERS.with_borrow_mut(|t| {
        let slot = match t.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                t.push(None);
                t.len() - 1
            }
        };
        t[slot] = Some(state);
        slot as u32 + 1
    })
}

/// Lets the tracer of `handle` go (its `NativeTracer` was collected).
pub fn unregister(handle: u32) {
    // Finalizers may run while the thread ends, its table already gone.
    let _ = TRACERS.try_with(|t| {
        if let Ok(mut t) = t.try_borrow_mut() {
            if let Some(slot) = (handle as usize).checked_sub(1).and_then(|i| t.get_mut(i)) {
                *slot = None;
            }
        }
    });
}

/// Runs `f` on the tracer of `handle`; an error for an unknown handle.
pub fn with<T>(handle: u32, f: impl FnOnce(&mut TracerState) -> Result<T>) -> Result<T> {
    let state = TRACERS.with_borrow(|t| {
        (handle as usize)
            .checked_sub(1)
            .and_then(|i| t.get(i))
            .and_then(Option::clone)
    });
    let Some(state) = state else {
        return Err(Error::new(
            Status::InvalidArg,
            "TracingPlugin: no such native tracer",
        ));
    };
    // Nothing a tracer calls comes back here, so it is never borrowed
    // already; an error rather than a panic if it were.
    let mut s = state
        .try_borrow_mut()
        .map_err(|_| Error::new(Status::GenericFailure, "TracingPlugin: tracer busy"))?;
    f(&mut s)
}

thread_local! {
    /// The answers of this JavaScript thread's tracers, by handle - 1, for
    /// `tracer_apply` (which takes only the handle).
    static ANSWERS: RefCell<Vec<Option<Arc<Answers>>>> = const { RefCell::new(Vec::new()) };
}

pub fn remember_answers(handle: u32, answers: Arc<Answers>) {
    let Some(i) = (handle as usize).checked_sub(1) else {
        return;
    };
    ANSWERS.with_borrow_mut(|a| {
        if a.len() <= i {
            a.resize(i + 1, None);
        }
        a[i] = Some(answers);
    });
}

pub fn forget_answers(handle: u32) {
    let _ = ANSWERS.try_with(|a| {
        if let Ok(mut a) = a.try_borrow_mut() {
            if let Some(slot) = (handle as usize).checked_sub(1).and_then(|i| a.get_mut(i)) {
                *slot = None;
            }
        }
    });
}

/// The answers of `handle`'s tracer; an error for an unknown handle.
pub fn answers(handle: u32) -> Result<Arc<Answers>> {
    ANSWERS
        .with_borrow(|a| {
            (handle as usize)
                .checked_sub(1)
                .and_then(|i| a.get(i))
                .and_then(Option::clone)
        })
        .ok_or_else(|| Error::new(Status::InvalidArg, "TracingPlugin: no such native tracer"))
}
