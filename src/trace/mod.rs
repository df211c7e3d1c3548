//! The span model of TracingPlugin: invocations, the span tree, GenAI
//! attributes and message JSON. Knows nothing of JavaScript.

pub mod agents;
pub mod attributes;
pub mod fast_map;
pub mod genai;
mod genai_render;
pub mod history;
pub mod ids;
pub mod inputs;
pub mod invocation;
pub mod key_text;
pub mod model;
pub mod open_span;
pub mod retry_outcome;
pub mod sink;
pub mod span;
pub mod streamed;
pub mod tool_failure;

#[cfg(test)]
mod capture_tests;
#[cfg(test)]
mod figures;
#[cfg(test)]
mod genai_reference;
#[cfg(test)]
mod links_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_join;
