//! napi face of the retry engine. lib/retry.js reads what it needs from the
//! ADK objects and renders `<details>`/`<args>` in JavaScript, then makes one
//! synchronous call here per failure: one number in, one number out.
//!
//! The shape is set by what a call costs on Node 20 (measured here): a
//! napi-rs class method ~0.25 µs before its first argument (unwrapping
//! `this`); a napi-rs function ~0.02 µs without arguments but ~0.1 µs with
//! any (its per-call borrow scope), plus ~0.1 µs per string read. The
//! failure path must cost no more than a plain JavaScript plugin's, so no
//! string crosses per failure: lib/retry.js keeps the (scope, tool) pairs
//! in Maps keyed by the exact JavaScript strings (so every two distinct
//! strings are distinct keys) and gives each pair a slot of its engine;
//! the engine id, the slot and whether the pair starts afresh travel as one
//! number (see `Key`), read by two plain N-API callbacks (`hot_calls`).
//! The guidance texts are handed over once, as the pieces between their
//! placeholders (`crate::retry::guidance`), and joined in JavaScript.

mod hot_calls;

use crate::retry::guidance;
use crate::retry::{Decision, RetryEngine};
use napi_derive::napi;
use std::cell::RefCell;

/// `retryFailure` answers: a positive number is the `retry_count` of a
/// retry; these mark the other decisions.
const EXCEEDED: f64 = -1.0;
const THROW: f64 = -2.0;
const TOOL_NOT_FOUND: f64 = -3.0;

thread_local! {
    /// Engines of live plugin instances, indexed by id. A slot is freed when
    /// its plugin is garbage collected (a FinalizationRegistry in
    /// lib/retry.js calls `retryEngineRelease`), so memory is bounded by live
    /// plugins. Per thread: a plugin lives on the JavaScript thread (main or
    /// worker) that made it, and every call for it, its release included,
    /// comes from there. This spares each per-failure call a global lock.
    static ENGINES: RefCell<Vec<Option<RetryEngine>>> = const { RefCell::new(Vec::new()) };
}

/// Creates the engine of one plugin instance and returns its id.
/// `max_retries` is validated in JavaScript (a non-negative integer).
#[napi]
pub fn retry_engine_create(max_retries: f64, throw_if_exceeded: bool) -> u32 {
    // `as` saturates: 1e21 stays "more than any count".
    let engine = Some(RetryEngine::new(max_retries as u64, throw_if_exceeded));
    ENGINES.with_borrow_mut(|all| {
        let index = match all.iter().position(Option::is_none) {
            Some(free) => {
                all[free] = engine;
                free
            }
            None => {
                all.push(engine);
                all.len() - 1
            }
        };
        u32::try_from(index).unwrap_or(u32::MAX)
    })
}

/// Frees an engine whose plugin is gone. Idempotent.
#[napi]
pub fn retry_engine_release(id: u32) {
    ENGINES.with_borrow_mut(|all| {
        if let Some(slot) = all.get_mut(id as usize) {
            *slot = None;
        }
    });
}

/// What one per-failure number holds:
/// `engine id * 2^32 + (fresh ? 2^31 : 0) + slot` (exact in a double for
/// engine ids below 2^21, which lib/retry.js checks).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Key {
    engine: usize,
    slot: u32,
    /// The pair holds no failure yet: counting starts from zero.
    fresh: bool,
}

const FRESH: u64 = 1 << 31;

impl Key {
    /// None for anything that is not such a number.
    fn decode(key: f64) -> Option<Key> {
        // A non-negative integer below 2^53 (NaN fails every comparison).
        if !(0.0..9_007_199_254_740_992.0).contains(&key) || key.fract() != 0.0 {
            return None;
        }
        let key = key as u64;
        Some(Key {
            engine: usize::try_from(key >> 32).ok()?,
            slot: u32::try_from(key & (FRESH - 1)).ok()?,
            fresh: key & FRESH != 0,
        })
    }
}

/// Runs `answer` with the engine and pair of `key`; a malformed key or a
/// released engine gets `fallback` (the call never throws into the user's
/// run). The registry stays borrowed for the call: it is short and never
/// calls back into JavaScript.
fn with_key<T>(key: f64, fallback: T, answer: impl FnOnce(&mut RetryEngine, Key) -> T) -> T {
    let Some(key) = Key::decode(key) else {
        return fallback;
    };
    ENGINES.with_borrow_mut(|all| match all.get_mut(key.engine) {
        Some(Some(engine)) => answer(engine, key),
        _ => fallback,
    })
}

// The per-failure calls. `hot_calls` exposes them as plain N-API
// callbacks; these take the key already read as a number.

/// Counts a failure: the retry count, or -1 (exceeded guidance) / -2
/// (reject).
fn failure(key: f64) -> f64 {
    with_key(key, THROW, |e, k| encode(e.failure(k.slot, k.fresh)))
}

/// Counts a failure of a tool name the agent does not have: the retry count,
/// or -3 (answer the tool-not-found text).
fn unknown_tool_failure(key: f64) -> f64 {
    with_key(key, TOOL_NOT_FOUND, |e, k| {
        encode(e.unknown_tool_failure(k.slot, k.fresh))
    })
}

/// The fixed pieces of the guidance texts, in placeholder order (see
/// `crate::retry::guidance`).
#[napi(object)]
pub struct GuidanceTexts {
    /// Around: name, details, args, n, max.
    pub retry: Vec<String>,
    /// Around: name, max, details, args, name.
    pub exceeded: Vec<String>,
    /// Around: name, details, args, name.
    pub not_retryable: Vec<String>,
    /// Around: name, list; then the list separator and the empty-list word.
    pub tool_not_found: Vec<String>,
}

#[napi]
pub fn retry_guidance_texts() -> GuidanceTexts {
    let owned = |pieces: &[&str]| pieces.iter().map(|p| (*p).to_owned()).collect();
    GuidanceTexts {
        retry: owned(&guidance::RETRY),
        exceeded: owned(&guidance::EXCEEDED),
        not_retryable: owned(&guidance::NOT_RETRYABLE),
        tool_not_found: owned(&guidance::TOOL_NOT_FOUND),
    }
}

fn encode(decision: Decision) -> f64 {
    match decision {
        Decision::Retry { count } => count as f64,
        Decision::Exceeded => EXCEEDED,
        Decision::Throw => THROW,
        Decision::ToolNotFound => TOOL_NOT_FOUND,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(engine: u32, slot: u32, fresh: bool) -> f64 {
        (u64::from(engine) << 32 | if fresh { FRESH } else { 0 } | u64::from(slot)) as f64
    }

    #[test]
    fn keys_reach_their_engine_and_slot() {
        let id = retry_engine_create(2.0, true);
        assert_eq!(failure(key(id, 0, true)), 1.0);
        assert_eq!(failure(key(id, 0, false)), 2.0);
        assert_eq!(failure(key(id, 0, false)), THROW);
        assert_eq!(failure(key(id, 1, true)), 1.0);
        // Fresh again (a success, or the slot reused by another pair).
        assert_eq!(failure(key(id, 0, true)), 1.0);
        retry_engine_release(id);
    }

    #[test]
    fn keys_decode_their_parts() {
        assert_eq!(
            Key::decode(key(7, 0x7fff_ffff, true)),
            Some(Key {
                engine: 7,
                slot: 0x7fff_ffff,
                fresh: true
            })
        );
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 2f64.powi(53)] {
            assert_eq!(Key::decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn unknown_tool_failures_are_never_thrown() {
        let id = retry_engine_create(0.0, true);
        assert_eq!(unknown_tool_failure(key(id, 0, true)), TOOL_NOT_FOUND);
        assert_eq!(failure(key(id, 0, false)), THROW);
        retry_engine_release(id);
    }

    #[test]
    fn bad_keys_and_released_engines_do_nothing() {
        assert_eq!(failure(-3.0), THROW);
        assert_eq!(unknown_tool_failure(f64::NAN), TOOL_NOT_FOUND);
        assert_eq!(failure(key(u32::MAX >> 12, 0, true)), THROW);
        let id = retry_engine_create(3.0, false);
        retry_engine_release(id);
        retry_engine_release(id);
        assert_eq!(failure(key(id, 0, true)), THROW);
    }

    #[test]
    fn released_slots_are_reused() {
        let a = retry_engine_create(1.0, true);
        retry_engine_release(a);
        let b = retry_engine_create(1.0, true);
        // The registry is per thread: no other test takes the slot.
        assert_eq!(a, b);
        retry_engine_release(b);
    }
}
