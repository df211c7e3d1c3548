//! Module wiring only: the engines live in `retry`, `trace` and `export`;
//! `js` is the napi layer that exposes them to Node.

pub mod export;
pub mod retry;
pub mod trace;

mod js;
