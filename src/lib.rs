//! Module wiring only: the engines live in `retry`, `trace` and `export`;
//! `js` is the napi layer that exposes them to Node.

pub mod export;
pub mod retry;
pub mod trace;

// napi registers the exports at load time; a test build never loads them.
#[cfg_attr(test, allow(dead_code))]
mod js;

// mimalloc, and how long it keeps freed pages.
mod allocator;
