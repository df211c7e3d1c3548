//! napi face of the retry engine. lib/retry.js reads what it needs from the
//! ADK objects and renders `<details>`/`<args>` in JavaScript, then makes one
//! synchronous call here per failure: one short string in, one number out.
//!
//! The shape is set by what a call costs on Node 20 (measured here): a
//! napi-rs class method ~0.25 µs before its first argument (unwrapping
//! `this`); a napi-rs function ~0.02 µs without arguments but ~0.1 µs with
//! any (its per-call borrow scope), plus ~0.1 µs per string read as UTF-8.
//! The failure path must cost no more than a plain JavaScript plugin's, so
//! the engine id, scope and tool travel as one key string
//! `"<engine id>\0<scope>\0<tool>"` (see `with_key`), and the four
//! per-failure calls are plain N-API callbacks (`hot_calls`) that
//! read it as UTF-16 into a stack buffer (`key_arg`). The guidance
//! texts are handed over once, as the pieces between their placeholders
//! (`crate::retry::guidance`), and joined in JavaScript.

mod hot_calls;
mod key_arg;

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

/// Runs `answer` with the engine, scope and tool of a key
/// `"<engine id>\0<scope>[\0<tool>]"`; a malformed key or a released engine
/// gets `fallback` (the call never throws into the user's run). Scopes are
/// invocation ids (ADK's are `e-<uuid>`) or the global key and never hold a
/// NUL; a tool name may (everything after the second NUL is the name). The
/// registry stays borrowed for the call: it is short and never calls back
/// into JavaScript.
fn with_key<T>(key: &str, fallback: T, answer: impl FnOnce(&RetryEngine, &str, &str) -> T) -> T {
    let Some((id, rest)) = split_at_nul(key) else {
        return fallback;
    };
    let Ok(id) = id.parse::<usize>() else {
        return fallback;
    };
    let (scope, tool) = split_at_nul(rest).unwrap_or((rest, ""));
    ENGINES.with_borrow(|all| match all.get(id) {
        Some(Some(engine)) => answer(engine, scope, tool),
        _ => fallback,
    })
}

/// Splits at the first NUL. A plain byte loop: `split_once`'s pattern
/// searcher showed in profiles of these ~60-byte keys.
fn split_at_nul(text: &str) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == 0)?;
    // A NUL is one byte, so both sides are on char boundaries.
    Some((text.get(..at)?, text.get(at + 1..)?))
}

// The per-failure calls. `hot_calls` exposes them as plain N-API
// callbacks; these take the key already read as text.

/// Counts a failure (key `"<id>\0<scope>\0<tool>"`): the retry count, or -1
/// (exceeded guidance) / -2 (reject).
fn failure(key: &str) -> f64 {
    with_key(key, THROW, |e, scope, tool| encode(e.failure(scope, tool)))
}

/// Counts a failure of a tool name the agent does not have: the retry count,
/// or -3 (answer the tool-not-found text).
fn unknown_tool_failure(key: &str) -> f64 {
    with_key(key, TOOL_NOT_FOUND, |e, scope, tool| {
        encode(e.unknown_tool_failure(scope, tool))
    })
}

/// A success (key `"<id>\0<scope>\0<tool>"`): 1 when the tool had a count
/// in that scope, else 0. lib/retry.js calls it only for pairs it knows are
/// counted.
fn success(key: &str) -> f64 {
    with_key(
        key,
        0.0,
        |e, scope, tool| {
            if e.success(scope, tool) {
                1.0
            } else {
                0.0
            }
        },
    )
}

/// Drops the counts of a scope (key `"<id>\0<scope>"`). Returns whether any
/// count is left.
fn drop_scope(key: &str) -> bool {
    with_key(key, false, |e, scope, _| e.drop_scope(scope))
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

    #[test]
    fn keys_reach_their_engine_scope_and_tool() {
        let id = retry_engine_create(2.0, true);
        let key = |scope: &str, tool: &str| format!("{id}\0{scope}\0{tool}");
        assert_eq!(failure(&key("inv", "t")), 1.0);
        assert_eq!(failure(&key("inv", "t")), 2.0);
        assert_eq!(failure(&key("inv", "t")), THROW);
        // A NUL inside a tool name stays part of the name.
        assert_eq!(failure(&key("inv", "a\0b")), 1.0);
        assert_eq!(failure(&key("", "t")), 1.0);
        assert_eq!(success(&key("inv", "t")), 1.0);
        assert_eq!(success(&key("inv", "t")), 0.0);
        assert_eq!(failure(&key("inv", "t")), 1.0);
        assert!(drop_scope(&format!("{id}\0inv")));
        assert!(!drop_scope(&format!("{id}\0")));
        assert_eq!(failure(&key("inv", "a\0b")), 1.0);
        retry_engine_release(id);
    }

    #[test]
    fn unknown_tool_failures_are_never_thrown() {
        let id = retry_engine_create(0.0, true);
        let key = format!("{id}\0inv\0ghost");
        assert_eq!(unknown_tool_failure(&key), TOOL_NOT_FOUND);
        assert_eq!(failure(&key), THROW);
        retry_engine_release(id);
    }

    #[test]
    fn bad_keys_and_released_engines_do_nothing() {
        assert_eq!(success("nonsense"), 0.0);
        assert!(!drop_scope("4294967295\0inv"));
        let id = retry_engine_create(3.0, false);
        retry_engine_release(id);
        retry_engine_release(id);
        assert_eq!(success(&format!("{id}\0inv\0t")), 0.0);
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
