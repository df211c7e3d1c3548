//! One decision per failure, from the counts and the plugin's options.

use super::counts::FailureCounts;

/// What the plugin answers for one counted failure. The texts that go with
/// each answer are in `guidance`.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Decision {
    /// Within the limit: the retry guidance; `count` is the `retry_count`.
    Retry { count: u64 },
    /// Past the limit without throwing: the exceeded guidance
    /// (`retry_count` is `maxRetries`).
    Exceeded,
    /// Past the limit with `throwExceptionIfRetryExceeded`: the caller rejects.
    Throw,
    /// Past the limit for a tool name the agent does not have: never thrown,
    /// answered with `{ error: <tool-not-found text> }`.
    ToolNotFound,
}

pub struct RetryEngine {
    max_retries: u64,
    throw_if_exceeded: bool,
    counts: FailureCounts,
}

impl RetryEngine {
    pub fn new(max_retries: u64, throw_if_exceeded: bool) -> Self {
        Self {
            max_retries,
            throw_if_exceeded,
            counts: FailureCounts::new(),
        }
    }

    /// A counted failure of a registered tool (thrown, or found in a result).
    /// A failure the retry predicate rejected never gets here: it is not
    /// counted and is answered with the non-retryable guidance.
    pub fn failure(&self, scope: &str, tool: &str) -> Decision {
        let count = self.counts.increment(scope, tool);
        if count <= self.max_retries {
            Decision::Retry { count }
        } else if self.throw_if_exceeded {
            Decision::Throw
        } else {
            Decision::Exceeded
        }
    }

    /// A counted failure of a tool name the agent does not have. It shares
    /// the count of that name and is never thrown: past the limit the model
    /// is told which tools exist.
    pub fn unknown_tool_failure(&self, scope: &str, tool: &str) -> Decision {
        let count = self.counts.increment(scope, tool);
        if count <= self.max_retries {
            Decision::Retry { count }
        } else {
            Decision::ToolNotFound
        }
    }

    /// A result with no error: that tool starts again from zero. Returns
    /// whether it had a count in that scope.
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
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn retry(count: u64) -> Decision {
        Decision::Retry { count }
    }

    #[test]
    fn failures_within_the_limit_are_retries_counting_up() {
        let e = RetryEngine::new(3, true);
        for n in 1..=3 {
            assert_eq!(e.failure("inv", "t"), retry(n));
        }
    }

    #[test]
    fn past_the_limit_throws_when_asked_and_keeps_counting() {
        let e = RetryEngine::new(2, true);
        e.failure("inv", "t");
        e.failure("inv", "t");
        assert_eq!(e.failure("inv", "t"), Decision::Throw);
        assert_eq!(e.failure("inv", "t"), Decision::Throw);
        assert_eq!(e.count("inv", "t"), 4);
        e.success("inv", "t");
        assert_eq!(e.failure("inv", "t"), retry(1));
    }

    #[test]
    fn past_the_limit_without_throwing_is_exceeded_each_time() {
        let e = RetryEngine::new(1, false);
        assert_eq!(e.failure("inv", "t"), retry(1));
        assert_eq!(e.failure("inv", "t"), Decision::Exceeded);
        assert_eq!(e.failure("inv", "t"), Decision::Exceeded);
        assert_eq!(e.count("inv", "t"), 3);
    }

    #[test]
    fn zero_retries_exceeds_on_the_first_failure() {
        assert_eq!(RetryEngine::new(0, true).failure("i", "t"), Decision::Throw);
        assert_eq!(
            RetryEngine::new(0, false).failure("i", "t"),
            Decision::Exceeded
        );
    }

    #[test]
    fn a_huge_limit_is_never_reached() {
        let e = RetryEngine::new(u64::MAX, true);
        assert_eq!(e.failure("i", "t"), retry(1));
    }

    #[test]
    fn success_resets_that_tool_only() {
        let e = RetryEngine::new(5, true);
        e.failure("inv", "a");
        e.failure("inv", "a");
        e.failure("inv", "b");
        assert!(e.success("inv", "a"));
        assert_eq!(e.failure("inv", "a"), retry(1));
        assert_eq!(e.failure("inv", "b"), retry(2));
    }

    #[test]
    fn scopes_are_counted_apart_and_dropped_alone() {
        let e = RetryEngine::new(5, true);
        e.failure("inv1", "t");
        e.failure("inv1", "t");
        assert_eq!(e.failure("inv2", "t"), retry(1));
        assert!(e.drop_scope("inv1"));
        assert_eq!(e.scope_count(), 1);
        assert_eq!(e.failure("inv1", "t"), retry(1));
        assert_eq!(e.failure("inv2", "t"), retry(2));
        e.drop_scope("inv1");
        assert!(!e.drop_scope("inv2"));
        assert_eq!(e.scope_count(), 0);
    }

    #[test]
    fn success_of_the_last_tool_removes_the_scope() {
        let e = RetryEngine::new(5, true);
        e.failure("inv", "t");
        assert!(e.success("inv", "t"));
        assert_eq!(e.scope_count(), 0);
    }

    #[test]
    fn unknown_tools_share_the_count_and_are_never_thrown() {
        let e = RetryEngine::new(1, true);
        assert_eq!(e.unknown_tool_failure("inv", "ghost"), retry(1));
        assert_eq!(
            e.unknown_tool_failure("inv", "ghost"),
            Decision::ToolNotFound
        );
        // A thrown failure of the same name continues the same count.
        assert_eq!(e.failure("inv", "ghost"), Decision::Throw);
        assert_eq!(e.count("inv", "ghost"), 3);
    }

    #[test]
    fn unknown_tools_past_the_limit_without_throwing_are_not_found_too() {
        let e = RetryEngine::new(0, false);
        assert_eq!(
            e.unknown_tool_failure("inv", "ghost"),
            Decision::ToolNotFound
        );
    }
}
