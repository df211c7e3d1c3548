//! Consecutive-failure counts per (scope key, tool name).

use super::fast_hash::FastHash;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

type ToolCounts = HashMap<String, u64, FastHash>;

/// Emptied scopes kept for reuse. A retry loop alternates failure and
/// success, which removes and re-creates its scope each time; reusing the
/// key and table spares the allocator two allocations and frees per turn.
const SPARE_SCOPES: usize = 8;
/// Larger emptied scopes are freed rather than kept.
const SPARE_KEY_BYTES: usize = 256;
const SPARE_TOOLS: usize = 16;

#[derive(Default)]
struct Table {
    // scope key -> tool name -> consecutive failures. A scope with no tool
    // left is removed, so memory is bounded by scopes holding a failure.
    scopes: HashMap<String, ToolCounts, FastHash>,
    // Removed scopes' emptied key and table, at most SPARE_SCOPES.
    spare: Vec<(String, ToolCounts)>,
}

impl Table {
    fn remove_scope(&mut self, scope: &str) {
        let Some((mut key, mut tools)) = self.scopes.remove_entry(scope) else {
            return;
        };
        if self.spare.len() < SPARE_SCOPES
            && key.capacity() <= SPARE_KEY_BYTES
            && tools.capacity() <= SPARE_TOOLS
        {
            key.clear();
            tools.clear();
            self.spare.push((key, tools));
        }
    }
}

/// Counts shared by every callback of one plugin instance. Each operation
/// takes the lock once, so a read-modify-write is atomic even when callers
/// run on several threads (the JS thread is single, but the engine does not
/// rely on it).
#[derive(Default)]
pub struct FailureCounts {
    table: Mutex<Table>,
}

impl FailureCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one failure and returns the new count.
    pub fn increment(&self, scope: &str, tool: &str) -> u64 {
        let mut table = self.lock();
        if let Some(tools) = table.scopes.get_mut(scope) {
            // get_mut first: the common repeat failure allocates no key.
            if let Some(count) = tools.get_mut(tool) {
                *count = count.saturating_add(1);
                return *count;
            }
            tools.insert(tool.to_owned(), 1);
            return 1;
        }
        let (mut key, mut tools) = table.spare.pop().unwrap_or_default();
        key.push_str(scope);
        tools.insert(tool.to_owned(), 1);
        table.scopes.insert(key, tools);
        1
    }

    /// Forgets one tool's failures in one scope (a success). Returns whether
    /// it had any.
    pub fn reset(&self, scope: &str, tool: &str) -> bool {
        let mut table = self.lock();
        let Some(tools) = table.scopes.get_mut(scope) else {
            return false;
        };
        let had = tools.remove(tool).is_some();
        if tools.is_empty() {
            table.remove_scope(scope);
        }
        had
    }

    /// Forgets every count of a scope (an invocation that ended). Returns
    /// whether any count is left in any scope.
    pub fn drop_scope(&self, scope: &str) -> bool {
        let mut table = self.lock();
        table.remove_scope(scope);
        !table.scopes.is_empty()
    }

    /// The current count, 0 when none.
    pub fn get(&self, scope: &str, tool: &str) -> u64 {
        self.lock()
            .scopes
            .get(scope)
            .and_then(|tools| tools.get(tool))
            .copied()
            .unwrap_or(0)
    }

    /// Scopes currently holding at least one failure.
    pub fn scope_count(&self) -> usize {
        self.lock().scopes.len()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock leaves plain integers behind, which
        // are still consistent: keep using them rather than failing forever.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::FailureCounts;
    use std::sync::Arc;

    #[test]
    fn counts_per_scope_and_tool() {
        let c = FailureCounts::new();
        assert_eq!(c.increment("inv1", "a"), 1);
        assert_eq!(c.increment("inv1", "a"), 2);
        assert_eq!(c.increment("inv1", "b"), 1);
        assert_eq!(c.increment("inv2", "a"), 1);
        assert_eq!(c.get("inv1", "a"), 2);
        assert_eq!(c.get("nope", "a"), 0);
    }

    #[test]
    fn reset_forgets_one_tool_and_removes_empty_scopes() {
        let c = FailureCounts::new();
        c.increment("s", "a");
        c.increment("s", "b");
        assert!(c.reset("s", "a"));
        assert_eq!(c.get("s", "a"), 0);
        assert_eq!(c.get("s", "b"), 1);
        assert_eq!(c.scope_count(), 1);
        assert!(c.reset("s", "b"));
        assert_eq!(c.scope_count(), 0);
        assert!(!c.reset("unknown", "x"));
        assert!(!c.reset("s", "b"));
    }

    #[test]
    fn a_reused_scope_starts_empty() {
        let c = FailureCounts::new();
        c.increment("inv1", "a");
        c.increment("inv1", "b");
        assert!(!c.drop_scope("inv1"));
        // The next scope reuses inv1's key and table: nothing of inv1 shows.
        assert_eq!(c.increment("inv2", "b"), 1);
        assert_eq!(c.get("inv2", "a"), 0);
        assert_eq!(c.get("inv1", "b"), 0);
        assert_eq!(c.scope_count(), 1);
        c.reset("inv2", "b");
        assert_eq!(c.increment("x", "b"), 1);
        assert_eq!(c.get("inv2", "b"), 0);
    }

    #[test]
    fn spare_scopes_are_bounded() {
        let c = FailureCounts::new();
        for i in 0..100 {
            c.increment(&format!("inv{i}"), "t");
        }
        for i in 0..100 {
            c.drop_scope(&format!("inv{i}"));
        }
        assert_eq!(c.scope_count(), 0);
        assert!(c.lock().spare.len() <= super::SPARE_SCOPES);
    }

    #[test]
    fn drop_scope_keeps_other_scopes() {
        let c = FailureCounts::new();
        c.increment("inv1", "a");
        c.increment("inv1", "b");
        c.increment("global", "a");
        assert!(c.drop_scope("inv1"));
        assert!(c.drop_scope("inv1"));
        assert_eq!(c.get("inv1", "a"), 0);
        assert_eq!(c.get("global", "a"), 1);
        assert!(!c.drop_scope("global"));
        assert_eq!(c.scope_count(), 0);
    }

    #[test]
    fn empty_scope_key_is_a_key() {
        let c = FailureCounts::new();
        assert_eq!(c.increment("", "a"), 1);
        assert_eq!(c.increment("", "a"), 2);
    }

    #[test]
    fn concurrent_increments_are_each_counted_once() {
        let c = Arc::new(FailureCounts::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.increment("g", "t");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(c.get("g", "t"), 8000);
    }
}
