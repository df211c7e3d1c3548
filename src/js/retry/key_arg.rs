//! The key string the retry functions take, read with one napi call into a
//! stack buffer. napi-rs's own string arguments ask V8 for the length first,
//! then copy into a zeroed heap buffer and build a heap String: two
//! crossings and two allocations per argument, which was most of what a
//! failure cost on the Rust side.

use napi::bindgen_prelude::{FromNapiValue, TypeName, Utf16String, ValidateNapiValue, ValueType};
use napi::{check_status, sys};

// Keys are "<engine id>\0<invocation id>\0<tool name>": ~60 units in practice.
const STACK_UNITS: usize = 256;

/// A JavaScript string argument: ASCII kept on the stack, anything else (or
/// anything longer) converted to a heap String.
// It lives on the stack for one call; keeping it off the heap is the point.
#[allow(clippy::large_enum_variant)]
pub enum KeyArg {
    Ascii([u8; STACK_UNITS], usize),
    Other(String),
}

impl KeyArg {
    pub fn as_str(&self) -> &str {
        match self {
            // Only ASCII bytes are stored here, so this never fails.
            KeyArg::Ascii(bytes, len) => std::str::from_utf8(&bytes[..*len]).unwrap_or_default(),
            KeyArg::Other(text) => text,
        }
    }
}

impl From<&str> for KeyArg {
    fn from(text: &str) -> Self {
        let units: Vec<u16> = text.encode_utf16().collect();
        from_units(&units)
    }
}

fn from_units(units: &[u16]) -> KeyArg {
    if units.len() <= STACK_UNITS && units.iter().all(|&u| u < 0x80) {
        let mut bytes = [0u8; STACK_UNITS];
        for (byte, &unit) in bytes.iter_mut().zip(units) {
            *byte = unit as u8; // < 0x80: the same code point
        }
        return KeyArg::Ascii(bytes, units.len());
    }
    // Lone surrogates become U+FFFD.
    KeyArg::Other(String::from_utf16_lossy(units))
}

impl FromNapiValue for KeyArg {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> napi::Result<Self> {
        let mut buf = [0u16; STACK_UNITS];
        let mut written = 0usize;
        // SAFETY: `buf` is valid for `STACK_UNITS` units; V8 writes at most
        // `STACK_UNITS - 1` of them plus a NUL and reports how many it wrote.
        check_status!(
            unsafe {
                sys::napi_get_value_string_utf16(
                    env,
                    value,
                    buf.as_mut_ptr(),
                    STACK_UNITS,
                    &mut written,
                )
            },
            "retry key must be a string"
        )?;
        if written < STACK_UNITS - 1 {
            return Ok(from_units(&buf[..written]));
        }
        // Possibly cut short: read it whole the usual way.
        // SAFETY: the env and value the caller gave us.
        let whole = unsafe { Utf16String::from_napi_value(env, value) }?;
        Ok(from_units(&whole))
    }
}

impl TypeName for KeyArg {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for KeyArg {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_like_javascript_strings() {
        assert_eq!(
            KeyArg::from("e-1\0get_weather").as_str(),
            "e-1\0get_weather"
        );
        assert_eq!(KeyArg::from("météo ✓ 😀").as_str(), "météo ✓ 😀");
        assert_eq!(from_units(&[0x61, 0xD800, 0x62]).as_str(), "a\u{FFFD}b");
        assert_eq!(KeyArg::from("").as_str(), "");
        let long = "x".repeat(STACK_UNITS + 5);
        assert_eq!(KeyArg::from(long.as_str()).as_str(), long);
        assert!(matches!(KeyArg::from("abc"), KeyArg::Ascii(..)));
    }
}
