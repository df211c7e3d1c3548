//! A tracer's state, shared by its `NativeTracer` object and the per-callback
//! functions of hot.rs. Those are plain exported functions taking the
//! tracer's handle, not class methods: a napi-rs class method pays for
//! unwrapping `this` (a type-tag check) and for its native-borrow registry
//! (a global mutex and a SipHash map), measured at 340-420 ns per call
//! against 130-140 ns for a function with a handle looked up here.

use crate::export::memory::MemorySink;
use crate::trace::inputs::AgentInfo;
use crate::trace::model::Tracer;
use napi::{Error, Result, Status};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

pub struct TracerState {
    pub tracer: Tracer,
    pub memory: Option<Arc<MemorySink>>,
    pub warning: Option<String>,
    /// The sink's id in `registry` (0: nothing to deliver at exit).
    pub sink_id: u32,
    /// Sink warnings picked up by `finish`, handed out by `take_warnings`
    /// (only when no `on_warning` hook delivers them as they come).
    pub pending_warnings: Vec<String>,
    /// Agent trees sent once by `register_tree` (handle = index + 1), so a
    /// run's start does not convert the whole tree again. Bounded by
    /// `MAX_TREES`; lib/tracing.js passes the flat tree when none is free.
    pub trees: Vec<Vec<AgentInfo>>,
}

pub type Shared = Rc<RefCell<TracerState>>;

thread_local! {
    /// Live tracers of this thread (a worker thread has its own), by
    /// handle - 1; freed slots are reused, so the table is as long as the
    /// most tracers alive at once.
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
    // Nothing a tracer calls reaches JavaScript synchronously, so it is
    // never borrowed here already; an error rather than a panic if it were.
    let mut s = state
        .try_borrow_mut()
        .map_err(|_| Error::new(Status::GenericFailure, "TracingPlugin: tracer busy"))?;
    f(&mut s)
}
