//! One decision per failure, from the counts and the plugin's options.

use super::counts::FailureCounts;
use super::guidance;

/// What the plugin answers for one failure.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// Within the limit: the retry guidance; `count` is the `retry_count`.
    Retry { count: u64, guidance: String },
    /// Past the limit without throwing: the exceeded guidance
    /// (`retry_count` is `maxRetries`).
    Exceeded { guidance: String },
    /// Past the limit with `throwExceptionIfRetryExceeded`: the caller rejects.
    Throw,
    /// Past the limit for a tool name the agent does not have: never thrown,
    /// answered with `{ error: text }`.
    ToolNotFound { text: String },
}

pub struct RetryEngine {
    max_retries: u64,
    // `maxRetries` as JavaScript prints it, so the texts match a JS plugin's.
    max_text: String,
    throw_if_exceeded: bool,
    counts: FailureCounts,
}

impl RetryEngine {
    pub fn new(max_retries: u64, max_text: String, throw_if_exceeded: bool) -> Self {
        Self {
            max_retries,
            max_text,
            throw_if_exceeded,
            counts: FailureCounts::new(),
        }
    }

    /// A counted failure of a registered tool (thrown, or found in a result).
    pub fn failure(&self, scope: &str, tool: &str, details: &str, args: &str) -> Decision {
        let count = self.counts.increment(scope, tool);
        if count <= self.max_retries {
            return self.retry(tool, details, args, count);
        }
        if self.throw_if_exceeded {
            return Decision::Throw;
        }
        Decision::Exceeded {
            guidance: guidance::exceeded(tool, details, args, &self.max_text),
        }
    }

    /// A counted failure of a tool name the agent does not have. It shares
    /// the count of that name and is never thrown: past the limit the model
    /// is told which tools exist (`available`, in declaration order).
    pub fn unknown_tool_failure<'a>(
        &self,
        scope: &str,
        tool: &str,
        details: &str,
        args: &str,
        available: impl IntoIterator<Item = &'a str>,
    ) -> Decision {
        let count = self.counts.increment(scope, tool);
        if count <= self.max_retries {
            return self.retry(tool, details, args, count);
        }
        Decision::ToolNotFound {
            text: guidance::tool_not_found(tool, available),
        }
    }

    /// A failure the retry predicate rejected: not counted, never thrown.
    pub fn not_retryable(&self, tool: &str, details: &str, args: &str) -> String {
        guidance::not_retryable(tool, details, args)
    }

    /// A result with no error: that tool starts again from zero. Returns
    /// whether any count is left anywhere.
    pub fn success(&self, scope: &str, tool: &str) -> bool {
        self.counts.reset(scope, tool)
    }

    /// An invocation ended (or was abandoned): forget its counts. Returns
    /// whether any count is left anywhere.
    pub fn drop_scope(&self, scope: &str) -> bool {
        self.counts.drop_scope(scope)
    }

    pub fn count(&self, scope: &str, tool: &str) -> u64 {
        self.counts.get(scope, tool)
    }

    pub fn scope_count(&self) -> usize {
        self.counts.scope_count()
    }

    fn retry(&self, tool: &str, details: &str, args: &str, count: u64) -> Decision {
        Decision::Retry {
            count,
            guidance: guidance::retry(tool, details, args, count, &self.max_text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(max: u64, throw: bool) -> RetryEngine {
        RetryEngine::new(max, max.to_string(), throw)
    }

    fn count_of(d: &Decision) -> u64 {
        match d {
            Decision::Retry { count, .. } => *count,
            other => panic!("expected a retry, got {other:?}"),
        }
    }

    #[test]
    fn failures_within_the_limit_are_retries_counting_up() {
        let e = engine(3, true);
        for n in 1..=3 {
            let d = e.failure("inv", "t", "Error: x", "{}");
            assert_eq!(count_of(&d), n);
            let Decision::Retry { guidance, .. } = d else {
                unreachable!()
            };
            assert_eq!(guidance, guidance::retry("t", "Error: x", "{}", n, "3"));
        }
    }

    #[test]
    fn past_the_limit_throws_when_asked_and_keeps_counting() {
        let e = engine(2, true);
        e.failure("inv", "t", "d", "{}");
        e.failure("inv", "t", "d", "{}");
        assert_eq!(e.failure("inv", "t", "d", "{}"), Decision::Throw);
        assert_eq!(e.failure("inv", "t", "d", "{}"), Decision::Throw);
        assert_eq!(e.count("inv", "t"), 4);
        e.success("inv", "t");
        assert_eq!(count_of(&e.failure("inv", "t", "d", "{}")), 1);
    }

    #[test]
    fn past_the_limit_without_throwing_gives_exceeded_guidance() {
        let e = engine(1, false);
        e.failure("inv", "t", "d", "{}");
        assert_eq!(
            e.failure("inv", "t", "Error: e", "{\n  \"a\": 1\n}"),
            Decision::Exceeded {
                guidance: guidance::exceeded("t", "Error: e", "{\n  \"a\": 1\n}", "1")
            }
        );
    }

    #[test]
    fn zero_retries_exceeds_on_the_first_failure() {
        assert_eq!(
            engine(0, true).failure("i", "t", "d", "{}"),
            Decision::Throw
        );
        assert!(matches!(
            engine(0, false).failure("i", "t", "d", "{}"),
            Decision::Exceeded { .. }
        ));
    }

    #[test]
    fn max_text_is_printed_as_given() {
        let e = RetryEngine::new(u64::MAX, "1e+21".into(), true);
        let Decision::Retry { guidance, .. } = e.failure("i", "t", "d", "{}") else {
            panic!("expected a retry")
        };
        assert!(guidance.contains("**1 of 1e+21**"));
    }

    #[test]
    fn success_resets_that_tool_only() {
        let e = engine(5, true);
        e.failure("inv", "a", "d", "{}");
        e.failure("inv", "a", "d", "{}");
        e.failure("inv", "b", "d", "{}");
        e.success("inv", "a");
        assert_eq!(count_of(&e.failure("inv", "a", "d", "{}")), 1);
        assert_eq!(count_of(&e.failure("inv", "b", "d", "{}")), 2);
    }

    #[test]
    fn scopes_are_counted_apart_and_dropped_alone() {
        let e = engine(5, true);
        e.failure("inv1", "t", "d", "{}");
        e.failure("inv1", "t", "d", "{}");
        assert_eq!(count_of(&e.failure("inv2", "t", "d", "{}")), 1);
        e.drop_scope("inv1");
        assert_eq!(e.scope_count(), 1);
        assert_eq!(count_of(&e.failure("inv1", "t", "d", "{}")), 1);
        assert_eq!(count_of(&e.failure("inv2", "t", "d", "{}")), 2);
        e.drop_scope("inv1");
        e.drop_scope("inv2");
        assert_eq!(e.scope_count(), 0);
    }

    #[test]
    fn success_of_the_last_tool_removes_the_scope() {
        let e = engine(5, true);
        e.failure("inv", "t", "d", "{}");
        e.success("inv", "t");
        assert_eq!(e.scope_count(), 0);
    }

    #[test]
    fn not_retryable_is_not_counted() {
        let e = engine(1, true);
        let text = e.not_retryable("t", "Error: x", "{}");
        assert_eq!(text, guidance::not_retryable("t", "Error: x", "{}"));
        assert_eq!(e.count("inv", "t"), 0);
        assert_eq!(e.scope_count(), 0);
    }

    #[test]
    fn unknown_tools_share_the_count_and_are_never_thrown() {
        let e = engine(1, true);
        let d = e.unknown_tool_failure("inv", "ghost", "Error: nf", "{}", ["a", "b"]);
        assert_eq!(count_of(&d), 1);
        assert_eq!(
            e.unknown_tool_failure("inv", "ghost", "Error: nf", "{}", ["a", "b"]),
            Decision::ToolNotFound {
                text: guidance::tool_not_found("ghost", ["a", "b"])
            }
        );
        // A thrown failure of the same name continues the same count.
        assert_eq!(e.failure("inv", "ghost", "d", "{}"), Decision::Throw);
        assert_eq!(e.count("inv", "ghost"), 3);
    }

    #[test]
    fn unknown_tools_past_the_limit_without_throwing_are_not_found_too() {
        let e = engine(0, false);
        assert_eq!(
            e.unknown_tool_failure("inv", "ghost", "d", "{}", []),
            Decision::ToolNotFound {
                text: guidance::tool_not_found("ghost", [])
            }
        );
    }
}
