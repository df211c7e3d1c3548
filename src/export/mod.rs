//! Where finished spans go: memory, console, OTLP/HTTP. Knows nothing of
//! JavaScript; the napi layer picks a sink and hands it every ended span.

pub mod config;
pub mod console;
pub mod memory;
pub mod otlp;
pub mod tee;
