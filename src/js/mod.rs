//! The napi layer: one folder per plugin.

mod retry;
mod tracing;
