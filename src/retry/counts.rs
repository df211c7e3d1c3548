//! Consecutive-failure counts per (scope key, tool name).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What is left after a success, so the caller can skip later calls while
/// nothing it would ask about is counted.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Remaining {
    /// No count in any scope.
    Nothing,
    /// Counts of other tools only.
    OtherTools,
    /// This tool still has a count in some other scope.
    ThisTool,
}

#[derive(Default)]
struct Table {
    // scope key -> tool name -> consecutive failures. A scope with no tool
    // left is removed, so memory is bounded by scopes holding a failure.
    scopes: HashMap<String, HashMap<String, u64>>,
    // tool name -> how many scopes hold a count for it.
    tools: HashMap<String, usize>,
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
        // get_mut first: the common repeat failure allocates no key.
        if let Some(count) = table.scopes.get_mut(scope).and_then(|t| t.get_mut(tool)) {
            *count = count.saturating_add(1);
            return *count;
        }
        match table.scopes.get_mut(scope) {
            Some(tools) => {
                tools.insert(tool.to_owned(), 1);
            }
            None => {
                let tools = HashMap::from([(tool.to_owned(), 1)]);
                table.scopes.insert(scope.to_owned(), tools);
            }
        }
        match table.tools.get_mut(tool) {
            Some(scopes) => *scopes += 1,
            None => {
                table.tools.insert(tool.to_owned(), 1);
            }
        }
        1
    }

    /// Forgets one tool's failures in one scope (a success).
    pub fn reset(&self, scope: &str, tool: &str) -> Remaining {
        let mut table = self.lock();
        let Table { scopes, tools } = &mut *table;
        if let Some(in_scope) = scopes.get_mut(scope) {
            if in_scope.remove(tool).is_some() {
                forget_one(tools, tool);
            }
            if in_scope.is_empty() {
                scopes.remove(scope);
            }
        }
        if scopes.is_empty() {
            Remaining::Nothing
        } else if tools.contains_key(tool) {
            Remaining::ThisTool
        } else {
            Remaining::OtherTools
        }
    }

    /// Forgets every count of a scope (an invocation that ended). Returns
    /// whether any count is left in any scope.
    pub fn drop_scope(&self, scope: &str) -> bool {
        let mut table = self.lock();
        let Table { scopes, tools } = &mut *table;
        if let Some(dropped) = scopes.remove(scope) {
            for tool in dropped.keys() {
                forget_one(tools, tool);
            }
        }
        !scopes.is_empty()
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

    /// Tool names currently counted in some scope.
    pub fn tool_count(&self) -> usize {
        self.lock().tools.len()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock leaves plain integers behind, which
        // are still consistent: keep using them rather than failing forever.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One scope fewer holds `tool`.
fn forget_one(tools: &mut HashMap<String, usize>, tool: &str) {
    if let Some(scopes) = tools.get_mut(tool) {
        *scopes -= 1;
        if *scopes == 0 {
            tools.remove(tool);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FailureCounts, Remaining};
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
        assert_eq!(c.reset("s", "a"), Remaining::OtherTools);
        assert_eq!(c.get("s", "a"), 0);
        assert_eq!(c.get("s", "b"), 1);
        assert_eq!(c.scope_count(), 1);
        assert_eq!(c.reset("s", "b"), Remaining::Nothing);
        assert_eq!(c.scope_count(), 0);
        assert_eq!(c.reset("unknown", "x"), Remaining::Nothing);
        assert_eq!(c.tool_count(), 0);
    }

    #[test]
    fn reset_says_when_the_tool_is_still_counted_elsewhere() {
        let c = FailureCounts::new();
        c.increment("inv1", "a");
        c.increment("inv2", "a");
        assert_eq!(c.reset("inv1", "a"), Remaining::ThisTool);
        assert_eq!(c.reset("inv3", "a"), Remaining::ThisTool);
        assert_eq!(c.reset("inv2", "a"), Remaining::Nothing);
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
        assert_eq!(c.tool_count(), 1);
        assert!(!c.drop_scope("global"));
        assert_eq!(c.scope_count(), 0);
        assert_eq!(c.tool_count(), 0);
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
