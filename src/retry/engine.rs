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

    /// A counted failure of a registered tool (thrown, or found in a result)
    /// for the (scope, tool) pair of `slot`; `fresh` when the pair holds no
    /// failure (see `FailureCounts::increment`). A failure the retry
    /// predicate rejected never gets here: it is not counted and is
    /// answered with the non-retryable guidance.
    pub fn failure(&mut self, slot: u32, fresh: bool) -> Decision {
        let count = self.counts.increment(slot, fresh);
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
    pub fn unknown_tool_failure(&mut self, slot: u32, fresh: bool) -> Decision {
        let count = self.counts.increment(slot, fresh);
        if count <= self.max_retries {
            Decision::Retry { count }
        } else {
            Decision::ToolNotFound
        }
    }

    pub fn count(&self, slot: u32) -> u64 {
        self.counts.get(slot)
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
        let mut e = RetryEngine::new(3, true);
        assert_eq!(e.failure(0, true), retry(1));
        for n in 2..=3 {
            assert_eq!(e.failure(0, false), retry(n));
        }
    }

    #[test]
    fn past_the_limit_throws_when_asked_and_keeps_counting() {
        let mut e = RetryEngine::new(2, true);
        e.failure(0, true);
        e.failure(0, false);
        assert_eq!(e.failure(0, false), Decision::Throw);
        assert_eq!(e.failure(0, false), Decision::Throw);
        assert_eq!(e.count(0), 4);
        // A success in between: the next failure is fresh.
        assert_eq!(e.failure(0, true), retry(1));
    }

    #[test]
    fn past_the_limit_without_throwing_is_exceeded_each_time() {
        let mut e = RetryEngine::new(1, false);
        assert_eq!(e.failure(0, true), retry(1));
        assert_eq!(e.failure(0, false), Decision::Exceeded);
        assert_eq!(e.failure(0, false), Decision::Exceeded);
        assert_eq!(e.count(0), 3);
    }

    #[test]
    fn zero_retries_exceeds_on_the_first_failure() {
        assert_eq!(RetryEngine::new(0, true).failure(0, true), Decision::Throw);
        assert_eq!(
            RetryEngine::new(0, false).failure(0, true),
            Decision::Exceeded
        );
    }

    #[test]
    fn a_huge_limit_is_never_reached() {
        let mut e = RetryEngine::new(u64::MAX, true);
        assert_eq!(e.failure(0, true), retry(1));
    }

    #[test]
    fn slots_are_counted_apart() {
        let mut e = RetryEngine::new(5, true);
        e.failure(0, true);
        e.failure(0, false);
        assert_eq!(e.failure(1, true), retry(1));
        assert_eq!(e.failure(0, false), retry(3));
        assert_eq!(e.failure(1, false), retry(2));
    }

    #[test]
    fn unknown_tools_share_the_count_and_are_never_thrown() {
        let mut e = RetryEngine::new(1, true);
        assert_eq!(e.unknown_tool_failure(0, true), retry(1));
        assert_eq!(e.unknown_tool_failure(0, false), Decision::ToolNotFound);
        // A thrown failure of the same name continues the same count.
        assert_eq!(e.failure(0, false), Decision::Throw);
        assert_eq!(e.count(0), 3);
    }

    #[test]
    fn unknown_tools_past_the_limit_without_throwing_are_not_found_too() {
        let mut e = RetryEngine::new(0, false);
        assert_eq!(e.unknown_tool_failure(0, true), Decision::ToolNotFound);
    }
}
