//! napi face of the retry engine. lib/retry.js reads what it needs from the
//! ADK objects and renders `<details>`/`<args>` in JavaScript, then makes one
//! synchronous call here per failure: one short string in, one number out.
//!
//! The shape is set by what a call costs on Node 20 (measured here): a
//! napi-rs class method ~0.25 µs before its first argument (unwrapping
//! `this`), a plain function ~0.02 µs, each string argument ~0.1 µs and a
//! number ~0.06 µs. The failure path must cost no more than a plain
//! JavaScript plugin's, so the engine id, scope and tool travel as one key
//! string `"<engine id>\0<scope>\0<tool>"` (see `split_key`), read as UTF-16
//! in one call (`KeyArg`; reading UTF-8 makes V8 measure and transcode it
//! first, ~0.1 µs more per call). The guidance
//! texts are handed over once, as the pieces between their placeholders
//! (`crate::retry::guidance`), and joined in JavaScript.

use super::key_arg::KeyArg;
use crate::retry::guidance;
use crate::retry::{Decision, Remaining, RetryEngine};
use napi_derive::napi;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// `retryFailure` answers: a positive number is the `retry_count` of a
/// retry; these mark the other decisions.
const EXCEEDED: f64 = -1.0;
const THROW: f64 = -2.0;
const TOOL_NOT_FOUND: f64 = -3.0;

/// Engines of live plugin instances, indexed by id. A slot is freed when its
/// plugin is garbage collected (a FinalizationRegistry in lib/retry.js calls
/// `retryEngineRelease`), so memory is bounded by live plugins.
static ENGINES: Mutex<Vec<Option<Arc<RetryEngine>>>> = Mutex::new(Vec::new());

fn engines() -> MutexGuard<'static, Vec<Option<Arc<RetryEngine>>>> {
    // A panic elsewhere leaves a consistent Vec behind: keep using it.
    ENGINES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The engine behind `id`; a released or unknown id gets None and the call
/// does nothing (it never throws into the user's run).
fn engine(id: u32) -> Option<Arc<RetryEngine>> {
    engines().get(id as usize).and_then(Clone::clone)
}

/// Creates the engine of one plugin instance and returns its id.
/// `max_retries` is validated in JavaScript (a non-negative integer).
#[napi]
pub fn retry_engine_create(max_retries: f64, throw_if_exceeded: bool) -> u32 {
    // `as` saturates: 1e21 stays "more than any count".
    let engine = Some(Arc::new(RetryEngine::new(
        max_retries as u64,
        throw_if_exceeded,
    )));
    let mut all = engines();
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
}

/// Frees an engine whose plugin is gone. Idempotent.
#[napi]
pub fn retry_engine_release(id: u32) {
    if let Some(slot) = engines().get_mut(id as usize) {
        *slot = None;
    }
}

/// UTF-16 to UTF-8 in one allocation; keys are nearly always ASCII, which
/// `String::from_utf16_lossy` converts a char at a time. Lone surrogates
/// become U+FFFD, as there.
pub(super) fn utf16_to_string(units: &[u16]) -> String {
    if units.iter().all(|&u| u < 0x80) {
        // ASCII: every unit is one byte (so from_utf8 cannot fail).
        let bytes: Vec<u8> = units.iter().map(|&u| u as u8).collect();
        if let Ok(text) = String::from_utf8(bytes) {
            return text;
        }
    }
    String::from_utf16_lossy(units)
}

/// Splits `"<engine id>\0<scope>[\0<tool>]"`. Scopes are invocation ids
/// (ADK's are `e-<uuid>`) or the global key and never hold a NUL; a tool
/// name may (everything after the second NUL is the name).
fn split_key(key: &str) -> Option<(Arc<RetryEngine>, &str, &str)> {
    let (id, rest) = key.split_once('\0')?;
    let engine = engine(id.parse().ok()?)?;
    let (scope, tool) = rest.split_once('\0').unwrap_or((rest, ""));
    Some((engine, scope, tool))
}

/// Counts a failure (key `"<id>\0<scope>\0<tool>"`): the retry count, or -1
/// (exceeded guidance) / -2 (reject).
#[napi]
pub fn retry_failure(#[napi(ts_arg_type = "string")] key: KeyArg) -> f64 {
    split_key(&key.0).map_or(THROW, |(e, scope, tool)| encode(e.failure(scope, tool)))
}

/// Counts a failure of a tool name the agent does not have: the retry count,
/// or -3 (answer the tool-not-found text).
#[napi]
pub fn retry_unknown_tool_failure(#[napi(ts_arg_type = "string")] key: KeyArg) -> f64 {
    split_key(&key.0).map_or(TOOL_NOT_FOUND, |(e, scope, tool)| {
        encode(e.unknown_tool_failure(scope, tool))
    })
}

/// A success (key `"<id>\0<scope>\0<tool>"`). Returns what is left, so
/// JavaScript can skip later calls: 0 nothing, 1 other tools' counts only,
/// 2 this tool is still counted in another scope.
#[napi]
pub fn retry_success(#[napi(ts_arg_type = "string")] key: KeyArg) -> u32 {
    split_key(&key.0).map_or(0, |(e, scope, tool)| match e.success(scope, tool) {
        Remaining::Nothing => 0,
        Remaining::OtherTools => 1,
        Remaining::ThisTool => 2,
    })
}

/// Drops the counts of a scope (key `"<id>\0<scope>"`). Returns whether
/// any count is left.
#[napi]
pub fn retry_drop_scope(#[napi(ts_arg_type = "string")] key: KeyArg) -> bool {
    split_key(&key.0).is_some_and(|(e, scope, _)| e.drop_scope(scope))
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

    fn k(key: String) -> KeyArg {
        KeyArg(key)
    }

    #[test]
    fn keys_reach_their_engine_scope_and_tool() {
        let id = retry_engine_create(2.0, true);
        let key = |scope: &str, tool: &str| format!("{id}\0{scope}\0{tool}");
        assert_eq!(retry_failure(k(key("inv", "t"))), 1.0);
        assert_eq!(retry_failure(k(key("inv", "t"))), 2.0);
        assert_eq!(retry_failure(k(key("inv", "t"))), THROW);
        // A NUL inside a tool name stays part of the name.
        assert_eq!(retry_failure(k(key("inv", "a\0b"))), 1.0);
        assert_eq!(retry_failure(k(key("", "t"))), 1.0);
        // "t" is still counted under the empty scope.
        assert_eq!(retry_success(k(key("inv", "t"))), 2);
        assert_eq!(retry_failure(k(key("inv", "t"))), 1.0);
        assert!(retry_drop_scope(k(format!("{id}\0inv"))));
        assert!(!retry_drop_scope(k(format!("{id}\0"))));
        assert_eq!(retry_failure(k(key("inv", "a\0b"))), 1.0);
        retry_engine_release(id);
    }

    #[test]
    fn unknown_tool_failures_are_never_thrown() {
        let id = retry_engine_create(0.0, true);
        let key = format!("{id}\0inv\0ghost");
        assert_eq!(retry_unknown_tool_failure(k(key.clone())), TOOL_NOT_FOUND);
        assert_eq!(retry_failure(k(key)), THROW);
        retry_engine_release(id);
    }

    #[test]
    fn bad_keys_and_released_engines_do_nothing() {
        assert_eq!(retry_success(k("nonsense".into())), 0);
        assert!(!retry_drop_scope(k("4294967295\0inv".into())));
        let id = retry_engine_create(3.0, false);
        retry_engine_release(id);
        retry_engine_release(id);
        assert_eq!(retry_success(k(format!("{id}\0inv\0t"))), 0);
    }

    #[test]
    fn keys_convert_from_utf16_like_javascript_strings() {
        let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        assert_eq!(
            utf16_to_string(&units("e-1\0get_weather")),
            "e-1\0get_weather"
        );
        assert_eq!(utf16_to_string(&units("météo ✓ 😀")), "météo ✓ 😀");
        assert_eq!(utf16_to_string(&[0x61, 0xD800, 0x62]), "a\u{FFFD}b");
        assert_eq!(utf16_to_string(&[]), "");
    }

    #[test]
    fn released_slots_are_reused() {
        let a = retry_engine_create(1.0, true);
        retry_engine_release(a);
        let b = retry_engine_create(1.0, true);
        // Another test may take the slot first; either way ids stay small.
        assert!((b as usize) < engines().len());
        retry_engine_release(b);
    }
}
