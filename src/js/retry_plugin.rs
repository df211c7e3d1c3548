//! napi face of the retry engine. lib/retry.js reads what it needs from the
//! ADK objects and renders `<details>`/`<args>` in JavaScript, then makes one
//! synchronous call here per failure.

use crate::retry::{Decision, RetryEngine};
use napi_derive::napi;

/// What to answer for one failure. `kind`: 0 retry guidance, 1 exceeded
/// guidance, 2 reject, 3 tool-not-found text (`{ error: text }`).
#[napi(object)]
pub struct FailureDecision {
    pub kind: u32,
    /// The `retry_count` for kind 0.
    pub count: f64,
    pub text: String,
}

#[napi]
pub struct RetryCore {
    engine: RetryEngine,
}

#[napi]
impl RetryCore {
    /// `max_retries` is validated in JavaScript (a non-negative integer);
    /// `max_text` is how JavaScript prints it.
    #[napi(constructor)]
    pub fn new(max_retries: f64, max_text: String, throw_if_exceeded: bool) -> Self {
        // `as` saturates: 1e21 stays "more than any count".
        let max = max_retries as u64;
        Self {
            engine: RetryEngine::new(max, max_text, throw_if_exceeded),
        }
    }

    #[napi]
    pub fn failure(
        &self,
        scope: String,
        tool: String,
        details: String,
        args: String,
    ) -> FailureDecision {
        to_js(self.engine.failure(&scope, &tool, &details, &args))
    }

    #[napi]
    pub fn unknown_tool_failure(
        &self,
        scope: String,
        tool: String,
        details: String,
        args: String,
        available: Vec<String>,
    ) -> FailureDecision {
        to_js(self.engine.unknown_tool_failure(
            &scope,
            &tool,
            &details,
            &args,
            available.iter().map(String::as_str),
        ))
    }

    #[napi]
    pub fn not_retryable(&self, tool: String, details: String, args: String) -> String {
        self.engine.not_retryable(&tool, &details, &args)
    }

    /// Returns whether any count is left, so JavaScript can skip this call
    /// while nothing has failed.
    #[napi]
    pub fn success(&self, scope: String, tool: String) -> bool {
        self.engine.success(&scope, &tool)
    }

    /// Returns whether any count is left.
    #[napi]
    pub fn drop_scope(&self, scope: String) -> bool {
        self.engine.drop_scope(&scope)
    }
}

fn to_js(decision: Decision) -> FailureDecision {
    match decision {
        Decision::Retry { count, guidance } => FailureDecision {
            kind: 0,
            count: count as f64,
            text: guidance,
        },
        Decision::Exceeded { guidance } => FailureDecision {
            kind: 1,
            count: 0.0,
            text: guidance,
        },
        Decision::Throw => FailureDecision {
            kind: 2,
            count: 0.0,
            text: String::new(),
        },
        Decision::ToolNotFound { text } => FailureDecision {
            kind: 3,
            count: 0.0,
            text,
        },
    }
}
