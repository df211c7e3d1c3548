//! The napi layer: one folder per plugin.

mod retry;
mod tracing;

/// Runs when the addon is loaded, once per process.
#[napi_derive::module_init]
fn init() {
    crate::allocator::keep_freed_pages();
}
