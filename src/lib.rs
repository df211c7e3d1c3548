//! Module wiring only: the engines live in `retry`, `trace` and `export`;
//! `js` is the napi layer that exposes them to Node.

pub mod export;
pub mod retry;
pub mod trace;

// napi registers the exports at load time; a test build never loads them.
#[cfg_attr(test, allow(dead_code))]
mod js;

// Spans are allocated on the JavaScript thread and freed on the exporter
// thread: mimalloc hands such cross-thread frees back cheaply, where the
// system allocator measured as a large share of the exporter's CPU.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
