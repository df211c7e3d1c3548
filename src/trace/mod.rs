//! The span model of TracingPlugin: invocations, the span tree, GenAI
//! attributes and message JSON. Knows nothing of JavaScript.

pub mod span;
