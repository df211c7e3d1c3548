//! The engine of ReflectAndRetryToolPlugin: failure counts per (scope, tool),
//! the decision for each failure, and the guidance texts the model reads.
//! Knows nothing of JavaScript; `crate::js::retry` exposes it.

pub mod counts;
pub mod engine;
mod fast_hash;
pub mod guidance;

pub use engine::{Decision, RetryEngine};
