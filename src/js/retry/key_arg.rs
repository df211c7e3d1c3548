//! The key string the retry functions take, read with one napi call into a
//! stack buffer and handed on as `&str` in place. napi-rs's own string
//! arguments ask V8 for the length first, then copy into a zeroed heap
//! buffer and build a heap String: two crossings and two allocations per
//! argument, which was most of what a failure cost on the Rust side. The
//! buffers here are left uninitialised (V8 writes what is read) and nothing
//! is moved: both showed in profiles of the per-failure call.

use napi::bindgen_prelude::FromNapiValue;
use napi::bindgen_prelude::Utf16String;
use napi::sys;
use std::mem::MaybeUninit;

// Keys are "<engine id>\0<invocation id>\0<tool name>": ~60 units in practice.
const STACK_UNITS: usize = 256;

/// Calls `f` with the JavaScript string `value` as text; None when it is not
/// a string. ASCII up to `STACK_UNITS - 2` units stays on the stack; anything
/// else is converted to a heap String (lone surrogates become U+FFFD).
///
/// # Safety
/// `env` and `value` must be valid for the running N-API callback.
pub unsafe fn with_str<R>(
    env: sys::napi_env,
    value: sys::napi_value,
    f: impl FnOnce(&str) -> R,
) -> Option<R> {
    let mut units = [MaybeUninit::<u16>::uninit(); STACK_UNITS];
    let mut written = 0usize;
    // SAFETY: `units` is valid for `STACK_UNITS` units; V8 writes at most
    // `STACK_UNITS - 1` of them plus a NUL and reports how many it wrote.
    let status = unsafe {
        sys::napi_get_value_string_utf16(
            env,
            value,
            units.as_mut_ptr().cast(),
            STACK_UNITS,
            &mut written,
        )
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    if written < STACK_UNITS - 1 {
        // SAFETY: V8 initialised the first `written` units.
        let units = unsafe { std::slice::from_raw_parts(units.as_ptr().cast::<u16>(), written) };
        return Some(with_units(units, f));
    }
    // Possibly cut short: read it whole the usual way.
    // SAFETY: the env and value our caller vouched for.
    let whole = unsafe { Utf16String::from_napi_value(env, value) }.ok()?;
    Some(with_units(&whole, f))
}

/// Calls `f` with UTF-16 `units` as text.
fn with_units<R>(units: &[u16], f: impl FnOnce(&str) -> R) -> R {
    if units.len() <= STACK_UNITS {
        // One pass copies and checks: any unit >= 0x80 sets a high bit.
        let mut bytes = [MaybeUninit::<u8>::uninit(); STACK_UNITS];
        let mut all = 0u16;
        for (byte, &unit) in bytes.iter_mut().zip(units) {
            all |= unit;
            byte.write(unit as u8);
        }
        if all < 0x80 {
            // SAFETY: the first `units.len()` bytes were just written, and
            // each is ASCII (< 0x80, the same code point), so valid UTF-8.
            let text = unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(
                    bytes.as_ptr().cast::<u8>(),
                    units.len(),
                ))
            };
            return f(text);
        }
    }
    f(&String::from_utf16_lossy(units))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        let units: Vec<u16> = text.encode_utf16().collect();
        with_units(&units, str::to_owned)
    }

    #[test]
    fn converts_like_javascript_strings() {
        assert_eq!(roundtrip("e-1\0get_weather"), "e-1\0get_weather");
        assert_eq!(roundtrip("météo ✓ 😀"), "météo ✓ 😀");
        assert_eq!(
            with_units(&[0x61, 0xD800, 0x62], str::to_owned),
            "a\u{FFFD}b"
        );
        assert_eq!(roundtrip(""), "");
        let long = "x".repeat(STACK_UNITS + 5);
        assert_eq!(roundtrip(&long), long);
    }
}
