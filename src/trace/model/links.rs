//! AgentTool runs: an invocation started by a tool call of another one is
//! that call's child. Its root span is parented by the call's `execute_tool`
//! span, in the caller's trace, and the caller's end ends it.

use super::{Tracer, RECENTLY_FINISHED};
use crate::trace::invocation::Invocation;

/// How far a chain of nested AgentTool runs is followed (cycle guard).
const MAX_DEPTH: usize = 64;
/// How many linked runs `linked_runs` lists at most.
const MAX_LINKED: usize = 4096;

/// The span an AgentTool run hangs under: the `execute_tool` span of its
/// call (by function call id, else the latest open span of that tool, else
/// the innermost open tool span), or the caller's root.
fn call_span(parent: &Invocation, call_id: Option<&str>, tool: Option<&str>) -> [u8; 8] {
    let by_id = call_id.filter(|c| !c.is_empty()).and_then(|id| {
        parent
            .tools
            .iter()
            .rev()
            .find(|t| t.call_id.as_deref() == Some(id))
    });
    let by_tool = || {
        let tool = tool.filter(|t| !t.is_empty())?;
        parent
            .tools
            .iter()
            .rev()
            .find(|t| !t.callbacks_done && t.tool == tool)
    };
    by_id
        .or_else(by_tool)
        .map(|t| t.span.id)
        .or_else(|| parent.innermost_open_tool())
        .unwrap_or(parent.root.id)
}

impl Tracer {
    /// Makes `inv_id`, a run just started by an AgentTool call of
    /// `parent_id` (function call `call_id` of tool `tool`), that call's
    /// child. Only a fresh run is linked (nothing but its root yet), once.
    /// A caller that already ended (a consumer broke out while the call was
    /// still starting its run) took its trace with it: the run is dropped,
    /// as later callbacks of a finished invocation are. An unknown caller
    /// (not traced here) changes nothing.
    pub fn link(
        &mut self,
        inv_id: &str,
        parent_id: &str,
        call_id: Option<&str>,
        tool: Option<&str>,
    ) {
        if self.stopped || inv_id == parent_id || !self.open.contains_key(inv_id) {
            return;
        }
        if !self.open.contains_key(parent_id) {
            if self.finished.contains_key(parent_id) {
                self.drop_unstarted(inv_id);
            }
            return;
        }
        if self.is_ancestor(inv_id, parent_id) {
            return;
        }
        let Some(inv) = self.open.get(inv_id) else {
            return;
        };
        if inv.parent.is_some()
            || !inv.agents.is_empty()
            || !inv.models.is_empty()
            || !inv.tools.is_empty()
        {
            return;
        }
        let Some(parent) = self.open.get_mut(parent_id) else {
            return;
        };
        let span = call_span(parent, call_id, tool);
        let trace_id = parent.trace_id;
        let sampled = parent.sampled;
        parent.children.push(inv_id.to_string());
        if let Some(inv) = self.open.get_mut(inv_id) {
            // The call's trace replaces an application span the run joined
            // at its start (joinActiveTrace), and its sampling with it.
            let left = (!inv.sampled).then_some(inv.trace_id);
            let left_state = inv.trace_state.take().map(|_| inv.trace_id);
            inv.joined = false;
            inv.parent_is_remote = false;
            inv.sampled = sampled;
            inv.trace_id = trace_id;
            inv.root.parent = Some(span);
            inv.parent = Some(parent_id.to_string());
            if let Some(old) = left {
                self.forget_unsampled(old);
            }
            if let Some(old) = left_state {
                self.forget_trace_state(old);
            }
            if !sampled {
                self.note_unsampled(trace_id);
            }
        }
    }

    /// Forgets a run that has nothing but its root, without ending a span;
    /// its later callbacks are ignored.
    fn drop_unstarted(&mut self, inv_id: &str) {
        let Some(inv) = self.open.remove(inv_id) else {
            return;
        };
        self.order.remove(&inv.seq);
        if !inv.sampled {
            self.forget_unsampled(inv.trace_id);
        }
        self.finished.insert(inv.id.clone(), inv.trace_id);
        self.finished_order.push_back(inv.id);
        while self.finished_order.len() > RECENTLY_FINISHED {
            if let Some(old) = self.finished_order.pop_front() {
                self.finished.remove(&old);
            }
        }
    }

    /// The open runs `id` ends with it (its AgentTool runs, theirs, …),
    /// deepest last; empty for a run that started none.
    pub fn linked_runs(&self, id: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut next = 0;
        if let Some(inv) = self.open.get(id) {
            out.extend(inv.children.iter().cloned());
        }
        // Breadth first; the link rules keep it a tree of bounded depth.
        while next < out.len() && out.len() < MAX_LINKED {
            if let Some(inv) = self.open.get(&out[next]) {
                out.extend(inv.children.iter().cloned());
            }
            next += 1;
        }
        out
    }

    /// Whether `ancestor` is `id` or one of the callers above it.
    fn is_ancestor(&self, ancestor: &str, id: &str) -> bool {
        let mut cur = Some(id);
        for _ in 0..MAX_DEPTH {
            match cur {
                Some(c) if c == ancestor => return true,
                Some(c) => cur = self.open.get(c).and_then(|i| i.parent.as_deref()),
                None => return false,
            }
        }
        true
    }

    /// Called by `finish` for an invocation already out of `open`: its
    /// caller forgets it, and the runs it started that are still open end
    /// first, interrupted (their spans end before the tool spans they hang
    /// under).
    pub(super) fn unlink(&mut self, inv: &mut Invocation) {
        if let Some(parent) = inv.parent.as_deref().and_then(|p| self.open.get_mut(p)) {
            parent.children.retain(|c| *c != inv.id);
        }
        for child in std::mem::take(&mut inv.children) {
            self.finish(&child, true);
        }
    }
}
