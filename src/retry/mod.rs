//! The engine of ReflectAndRetryToolPlugin: failure counts per (scope, tool)
//! pair (one slot each; lib/retry.js keeps the pairs),
//! the decision for each failure, and the guidance texts the model reads.
//! Knows nothing of JavaScript; `crate::js::retry` exposes it.

pub mod counts;
pub mod engine;
pub mod guidance;

pub use engine::{Decision, RetryEngine};
