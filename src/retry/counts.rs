//! Consecutive-failure counts, one slot per (scope key, tool name) pair.
//!
//! The pairs themselves are kept by lib/retry.js, in Maps keyed by the exact
//! JavaScript strings: any two distinct invocation ids or tool names (lone
//! surrogates and NULs included) are distinct pairs, and a count is reached
//! without hashing or copying a string on either side. JavaScript hands out
//! the slot numbers densely (a free list), so the table is bounded by the
//! pairs alive at once: the open invocations' failed tools, and in global
//! scope the tool names that ever failed.

/// More slots than this are never kept (64 MiB of counts); a failure of a
/// slot past it counts as a first failure.
const MAX_SLOTS: usize = 1 << 23;

#[derive(Default)]
pub struct FailureCounts {
    counts: Vec<u64>,
}

impl FailureCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one failure to `slot` and returns the new count. `fresh`: the
    /// pair holds no failure yet (new, reset by a success, or its slot
    /// reused), so counting starts again from zero.
    pub fn increment(&mut self, slot: u32, fresh: bool) -> u64 {
        let at = slot as usize;
        if at >= self.counts.len() {
            if at >= MAX_SLOTS {
                return 1;
            }
            self.counts.resize(at + 1, 0);
        }
        let count = &mut self.counts[at];
        *count = if fresh { 1 } else { count.saturating_add(1) };
        *count
    }

    /// The count last written to `slot` (0 when it never was).
    pub fn get(&self, slot: u32) -> u64 {
        self.counts.get(slot as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::{FailureCounts, MAX_SLOTS};

    #[test]
    fn counts_per_slot() {
        let mut c = FailureCounts::new();
        assert_eq!(c.increment(0, true), 1);
        assert_eq!(c.increment(0, false), 2);
        assert_eq!(c.increment(3, true), 1);
        assert_eq!(c.get(0), 2);
        assert_eq!(c.get(1), 0);
        assert_eq!(c.get(99), 0);
    }

    #[test]
    fn a_fresh_failure_starts_from_one() {
        let mut c = FailureCounts::new();
        c.increment(2, true);
        c.increment(2, false);
        assert_eq!(c.increment(2, true), 1);
    }

    #[test]
    fn a_slot_that_was_never_written_counts_from_zero() {
        let mut c = FailureCounts::new();
        assert_eq!(c.increment(5, false), 1);
    }

    #[test]
    fn slots_past_the_bound_are_not_kept() {
        let mut c = FailureCounts::new();
        assert_eq!(c.increment(u32::MAX, false), 1);
        assert_eq!(c.increment(MAX_SLOTS as u32, false), 1);
        assert!(c.counts.len() <= MAX_SLOTS);
    }

    #[test]
    fn counts_saturate() {
        let mut c = FailureCounts::new();
        c.counts = vec![u64::MAX];
        assert_eq!(c.increment(0, false), u64::MAX);
    }
}
