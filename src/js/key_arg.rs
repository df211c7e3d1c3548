//! The key string the retry functions take, read with one napi call into a
//! stack buffer. napi-rs's own string arguments ask V8 for the length first,
//! then copy into a zeroed heap buffer: two crossings and an allocation per
//! argument, which is most of what a failure costs on the Rust side.

use super::retry_plugin::utf16_to_string;
use napi::bindgen_prelude::{FromNapiValue, TypeName, Utf16String, ValidateNapiValue, ValueType};
use napi::{check_status, sys};

/// A JavaScript string argument, as UTF-8.
pub struct KeyArg(pub String);

// Keys are "<engine id>\0<invocation id>\0<tool name>": ~60 units in practice.
const STACK_UNITS: usize = 256;

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
            return Ok(KeyArg(utf16_to_string(&buf[..written])));
        }
        // Possibly cut short: read it whole the usual way.
        // SAFETY: same env and value the caller gave us.
        let whole = unsafe { Utf16String::from_napi_value(env, value) }?;
        Ok(KeyArg(utf16_to_string(&whole)))
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
