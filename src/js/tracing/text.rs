//! Reading the callback methods' string arguments in one pass.
//!
//! napi-rs's `String` conversion asks V8 for the UTF-8 length (a full scan),
//! zero-fills a buffer of that size and then converts: the length scan and
//! the zeroing showed up as ~10% of a traced invocation's native time. The
//! UTF-16 length is known without a scan and bounds the UTF-8 size (at most
//! 3 bytes per unit), so strings up to `STACK` bytes are converted once into
//! a stack buffer, up to `SCRATCH` into a reused per-thread buffer, and
//! copied out at their exact size. Longer ones (very big contents) keep
//! napi-rs's reading, measured faster there (no 3x buffer).

use crate::trace::key_text;
use napi::bindgen_prelude::{FromNapiValue, JsValue, Utf16String};
use napi::{sys, Error, JsString, Result, Status};
use std::mem::MaybeUninit;

const STACK: usize = 4096;
/// Strings up to this many bytes of buffer (3 per UTF-16 unit) use a
/// buffer kept per thread: bounded, and only the JavaScript thread calls.
const SCRATCH: usize = 256 * 1024;

thread_local! {
    static SCRATCH_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error::new(
            Status::StringExpected,
            "TracingPlugin: expected a string argument",
        ))
    }
}

/// The string's text.
pub fn owned(s: &JsString<'_>) -> Result<String> {
    let v = s.value();
    let (env, raw) = (v.env, v.value);
    let mut units = 0usize;
    // SAFETY: a null buffer only asks for the length in UTF-16 units
    // (`napi_string_expected` for a non-string).
    check(unsafe {
        sys::napi_get_value_string_utf16(env, raw, std::ptr::null_mut(), 0, &mut units)
    })?;
    let cap = units.saturating_mul(3).saturating_add(1);
    if cap > STACK {
        if cap <= SCRATCH {
            return SCRATCH_BUF.with_borrow_mut(|buf| one_pass(env, raw, cap, buf));
        }
        // SAFETY: `env` and `raw` come from the live callback.
        return unsafe { String::from_napi_value(env, raw) };
    }
    let mut buf = [MaybeUninit::<u8>::uninit(); STACK];
    let mut written = 0usize;
    // SAFETY: `cap` <= STACK bytes are writable, and `cap` is large enough
    // for the whole string (3 bytes per unit, 1 for the terminator), so
    // nothing is cut off.
    check(unsafe {
        sys::napi_get_value_string_utf8(env, raw, buf.as_mut_ptr().cast(), cap, &mut written)
    })?;
    let written = written.min(cap - 1);
    // SAFETY: V8 initialised the first `written` bytes with UTF-8 (lone
    // surrogates replaced by U+FFFD), as napi-rs's own reading assumes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), written) };
    Ok(unsafe { String::from_utf8_unchecked(bytes.to_vec()) })
}

/// Converts into a reused buffer of `cap` bytes, then copies the text out at
/// its size: a copy costs less than V8's UTF-8 length scan.
fn one_pass(
    env: sys::napi_env,
    raw: sys::napi_value,
    cap: usize,
    buf: &mut Vec<u8>,
) -> Result<String> {
    buf.clear();
    buf.reserve(cap);
    let mut written = 0usize;
    // SAFETY: `buf` has room for `cap` bytes, enough for the whole string.
    check(unsafe {
        sys::napi_get_value_string_utf8(env, raw, buf.as_mut_ptr().cast(), cap, &mut written)
    })?;
    // SAFETY: V8 initialised the first `written` (< cap) bytes with UTF-8.
    unsafe { buf.set_len(written.min(cap - 1)) };
    Ok(unsafe { String::from_utf8_unchecked(buf.as_slice().to_vec()) })
}

/// The key text of a string used as a key (invocation id, agent or tool
/// name, call id): `owned`, unless that lost a lone surrogate or holds the
/// escape character, then read again as UTF-16 (`crate::trace::key_text`),
/// so two distinct JavaScript strings are always two keys.
pub fn key(s: &JsString<'_>) -> Result<String> {
    let text = owned(s)?;
    if !key_text::needs_utf16(&text) {
        return Ok(text);
    }
    let v = s.value();
    // SAFETY: `env` and `value` come from the live callback.
    let units = unsafe { Utf16String::from_napi_value(v.env, v.value) }?;
    Ok(key_text::from_utf16(&units))
}
