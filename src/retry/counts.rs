//! Consecutive-failure counts per (scope key, tool name).

use std::collections::HashMap;
use std::sync::Mutex;

/// Counts shared by every callback of one plugin instance. Each operation
/// takes the lock once, so a read-modify-write is atomic even when callers
/// run on several threads (the JS thread is single, but the engine does not
/// rely on it).
#[derive(Default)]
pub struct FailureCounts {
    // scope key -> tool name -> consecutive failures. A scope with no tool
    // left is removed, so memory is bounded by scopes holding a failure.
    scopes: Mutex<HashMap<String, HashMap<String, u64>>>,
}

impl FailureCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one failure and returns the new count.
    pub fn increment(&self, scope: &str, tool: &str) -> u64 {
        let mut scopes = self.lock();
        // get_mut first: the common repeat failure allocates no key.
        if let Some(tools) = scopes.get_mut(scope) {
            if let Some(count) = tools.get_mut(tool) {
                *count = count.saturating_add(1);
                return *count;
            }
            tools.insert(tool.to_owned(), 1);
            return 1;
        }
        let mut tools = HashMap::with_capacity(1);
        tools.insert(tool.to_owned(), 1);
        scopes.insert(scope.to_owned(), tools);
        1
    }

    /// Forgets one tool's failures (a success). Returns whether any count
    /// is left in any scope, so callers can skip the next call while none is.
    pub fn reset(&self, scope: &str, tool: &str) -> bool {
        let mut scopes = self.lock();
        if let Some(tools) = scopes.get_mut(scope) {
            tools.remove(tool);
            if tools.is_empty() {
                scopes.remove(scope);
            }
        }
        !scopes.is_empty()
    }

    /// Forgets every count of a scope (an invocation that ended). Returns
    /// whether any count is left in any scope.
    pub fn drop_scope(&self, scope: &str) -> bool {
        let mut scopes = self.lock();
        scopes.remove(scope);
        !scopes.is_empty()
    }

    /// The current count, 0 when none.
    pub fn get(&self, scope: &str, tool: &str) -> u64 {
        self.lock()
            .get(scope)
            .and_then(|tools| tools.get(tool))
            .copied()
            .unwrap_or(0)
    }

    /// Scopes currently holding at least one failure.
    pub fn scope_count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HashMap<String, u64>>> {
        // A panic while holding the lock leaves plain integers behind, which
        // are still consistent: keep using them rather than failing forever.
        self.scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        assert!(!c.reset("s", "b"));
        assert_eq!(c.scope_count(), 0);
        assert!(!c.reset("unknown", "x"));
        assert_eq!(c.scope_count(), 0);
    }

    #[test]
    fn drop_scope_keeps_other_scopes() {
        let c = FailureCounts::new();
        c.increment("inv1", "a");
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
