//! The two per-failure retry calls as plain N-API callbacks.
//!
//! A `#[napi]` function with arguments opens a native-borrow scope per call
//! (an allocation and a thread-local push/pop, ~0.08 µs here); a zero-argument
//! one does not. These callbacks read their one number argument and answer
//! a number, so a failure costs less than a plain JavaScript plugin's Map
//! update. They are handed to JavaScript once, as the methods of the object
//! `retryHotCalls()` returns.

use napi::bindgen_prelude::{ToNapiValue, TypeName, ValueType};
use napi::{sys, Env};
use napi_derive::napi;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// An object built with raw N-API calls, returned as is.
pub struct RawObject(sys::napi_value);

impl ToNapiValue for RawObject {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> napi::Result<sys::napi_value> {
        Ok(value.0)
    }
}

impl TypeName for RawObject {
    fn type_name() -> &'static str {
        "Object"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!(
            "{what} failed ({status})"
        )))
    }
}

/// The per-failure calls, each taking one key number (`super::Key`).
#[napi(
    ts_return_type = "{ retryFailure(key: number): number; retryUnknownToolFailure(key: number): number }"
)]
pub fn retry_hot_calls(env: Env) -> napi::Result<RawObject> {
    let env = env.raw();
    let calls: [(&CStr, Callback); 2] = [
        (c"retryFailure", failure_callback),
        (c"retryUnknownToolFailure", unknown_tool_failure_callback),
    ];
    let mut object = ptr::null_mut();
    // SAFETY: `env` is the live env of this call; every out-pointer is valid.
    check(
        unsafe { sys::napi_create_object(env, &mut object) },
        "napi_create_object",
    )?;
    for (name, callback) in calls {
        let mut function = ptr::null_mut();
        let len = isize::try_from(name.to_bytes().len()).unwrap_or(0);
        // SAFETY: as above; `name` is NUL-terminated and outlives the call.
        check(
            unsafe {
                sys::napi_create_function(
                    env,
                    name.as_ptr(),
                    len,
                    Some(callback),
                    ptr::null_mut(),
                    &mut function,
                )
            },
            "napi_create_function",
        )?;
        // SAFETY: as above.
        check(
            unsafe { sys::napi_set_named_property(env, object, name.as_ptr(), function) },
            "napi_set_named_property",
        )?;
    }
    Ok(RawObject(object))
}

/// Runs `answer` on the first argument, read as a number, without letting
/// a panic cross into C; `fallback` when it is missing or not a number.
///
/// # Safety
/// `env` and `info` must be the ones N-API passed to the running callback.
unsafe fn answer_with_key<T: Copy>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    fallback: T,
    answer: impl FnOnce(f64) -> T,
) -> T {
    let mut argc = 1usize;
    let mut argv = [ptr::null_mut(); 1];
    // SAFETY: argv holds `argc` slots; this and data are not asked for.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok || argc < 1 {
        return fallback;
    }
    let mut key = 0f64;
    // SAFETY: argv[0] is a value of this callback's scope; a non-number
    // answers `napi_number_expected` and leaves `key` alone.
    if unsafe { sys::napi_get_value_double(env, argv[0], &mut key) } != sys::Status::napi_ok {
        return fallback;
    }
    catch_unwind(AssertUnwindSafe(|| answer(key))).unwrap_or(fallback)
}

/// # Safety
/// `env` must be the env of the running callback.
unsafe fn number(env: sys::napi_env, value: f64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: a valid env and out-pointer; on failure `out` stays null, which
    // N-API returns to JavaScript as undefined.
    unsafe { sys::napi_create_double(env, value, &mut out) };
    out
}

unsafe extern "C" fn failure_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: N-API calls this with the env and info of this call.
    unsafe {
        let answer = answer_with_key(env, info, super::THROW, super::failure);
        number(env, answer)
    }
}

unsafe extern "C" fn unknown_tool_failure_callback(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: as above.
    unsafe {
        let answer = answer_with_key(
            env,
            info,
            super::TOOL_NOT_FOUND,
            super::unknown_tool_failure,
        );
        number(env, answer)
    }
}
