//! Agent span synthesis: ADK 2.0.0 never dispatches the agent callbacks, so
//! agent spans are created on first activity of an agent name.

use super::ids::IdGen;
use super::inputs::AgentInfo;
use super::invocation::Invocation;
use super::key_text::display;
use super::open_span::OpenSpan;
use super::span::now_nanos;
use super::span::SpanData;

/// Synthesises the agent span of `name` (parents first).
pub fn ensure_agent_in(
    inv: &mut Invocation,
    ids: &mut IdGen,
    name: &str,
    depth: usize,
    ended: &mut Vec<SpanData>,
) -> [u8; 8] {
    if let Some(id) = inv.agent_span_id(name) {
        // Its run was over (its final answer came): this is a new run of
        // it, a loop's next pass, in a span of its own.
        if !inv.runs_over.iter().any(|n| n == name) || !end_subtree_if_idle(inv, name, ended) {
            return id;
        }
    }
    let info = inv.tree.get(name).cloned();
    let parent_id = match &info {
        _ if depth > 64 => inv.root.id,
        Some(AgentInfo {
            parent: Some(p), ..
        }) if inv.tree.contains_key(p) => {
            let p = p.clone();
            if inv.agent_span_id(&p).is_none() && above_run_start(inv, &p) {
                // An agent above the one the run started at (a resumed
                // session's) did not run unless it has a span: none is made.
                inv.root.id
            } else {
                end_parent_if_rerun(inv, &p, name, ended);
                close_finished_siblings(inv, &p, name, ended);
                ensure_agent_in(inv, ids, &p, depth + 1, ended)
            }
        }
        Some(_) => inv.root.id,
        None => inv.innermost_open_tool().unwrap_or(inv.root.id),
    };
    let mut span = OpenSpan::new(
        ids.span_id(),
        Some(parent_id),
        format!("invoke_agent {}", display(name)),
        now_nanos(),
    );
    inv.common(&mut span, "invoke_agent");
    span.set_str("gen_ai.agent.name", display(name));
    span.set_str("gen_ai.agent.id", display(&inv.id));
    if let Some(info) = info {
        if let Some(d) = &info.description {
            span.set_str("gen_ai.agent.description", d.as_str());
        }
        if let Some(m) = &info.model {
            span.set_str("gen_ai.request.model", m.as_str());
        }
    }
    let id = span.id;
    inv.runs_over.retain(|n| n != name);
    inv.children_done.retain(|(p, _)| p != name);
    inv.agents.push((name.to_string(), span));
    id
}

/// Whether `name` is an ancestor of the agent the run started at.
fn above_run_start(inv: &Invocation, name: &str) -> bool {
    let Some(start) = inv.root_agent.as_deref() else {
        return false;
    };
    let mut at = inv.tree.get(start).and_then(|i| i.parent.as_deref());
    for _ in 0..64 {
        match at {
            Some(p) if p == name => return true,
            Some(p) => at = inv.tree.get(p).and_then(|i| i.parent.as_deref()),
            None => return false,
        }
    }
    false
}

/// What an event says of its author's run: over with its final answer,
/// going on with anything else it sends (a streamed turn's text comes
/// before its function calls).
pub fn note_run_state(inv: &mut Invocation, author: &str, ends_run: bool) {
    if inv.agent_span_id(author).is_none() {
        return;
    }
    let parent = inv.tree.get(author).and_then(|i| i.parent.clone());
    if ends_run {
        if !inv.runs_over.iter().any(|n| n == author) {
            inv.runs_over.push(author.to_string());
        }
        if let Some(p) = parent {
            if !(inv.children_done.iter()).any(|(q, c)| *q == p && c == author) {
                inv.children_done.push((p, author.to_string()));
            }
        }
    } else {
        inv.runs_over.retain(|n| n != author);
        inv.children_done.retain(|(_, c)| c != author);
    }
}

/// A child whose run under `parent`'s open span was over runs again: the
/// parent runs again (a loop's next pass over a SequentialAgent), so its
/// span ends, to be opened afresh. A LoopAgent's own span covers all its
/// passes.
fn end_parent_if_rerun(inv: &mut Invocation, parent: &str, child: &str, ended: &mut Vec<SpanData>) {
    if inv.tree.get(parent).is_some_and(|p| p.looping) {
        return;
    }
    if !(inv.children_done.iter()).any(|(p, c)| p == parent && c == child) {
        return;
    }
    if inv.agent_span_id(parent).is_some() {
        end_subtree_if_idle(inv, parent, ended);
    }
}

/// Ends `top`'s open agent span and those below it (children first) when
/// none of them has a model or tool call still open; whether it did.
fn end_subtree_if_idle(inv: &mut Invocation, top: &str, ended: &mut Vec<SpanData>) -> bool {
    let subtree: Vec<String> = (inv.agents.iter())
        .filter(|(n, _)| inv.is_under(n, top))
        .map(|(n, _)| n.clone())
        .collect();
    if subtree.iter().any(|n| inv.agent_busy(n)) {
        return false;
    }
    let now = now_nanos();
    let mut i = inv.agents.len();
    while i > 0 {
        i -= 1;
        if subtree.contains(&inv.agents[i].0) {
            let (name, span) = inv.agents.remove(i);
            inv.runs_over.retain(|n| *n != name);
            ended.push(span.finish(inv.trace_id, now, inv.limit));
        }
    }
    true
}

/// A Workflow's agent node completed (afterNodeCallback): that agent
/// demonstrably finished, and so did the agents it ran. Their streamed model
/// calls end, then their spans (children first) unless a model or tool call
/// of theirs is still open (a long-running tool's: the run's end closes it).
pub fn end_finished_node(inv: &mut Invocation, name: &str, ended: &mut Vec<SpanData>) {
    if inv.agent_span_id(name).is_none() {
        return;
    }
    let mut i = inv.streamed.len();
    while i > 0 {
        i -= 1;
        if inv.is_under(&inv.streamed[i].0, name) {
            let (_, turn) = inv.streamed.remove(i);
            ended.push(turn.finish(inv.trace_id, inv.capture, inv.limit, None));
        }
    }
    end_subtree_if_idle(inv, name, ended);
}

/// In a sequential parent, a child becoming active means its open siblings
/// finished: end their subtrees (children first) unless still busy.
fn close_finished_siblings(
    inv: &mut Invocation,
    parent: &str,
    active: &str,
    ended: &mut Vec<SpanData>,
) {
    if !inv.tree.get(parent).is_some_and(|p| p.sequential) {
        return;
    }
    let siblings: Vec<String> = inv
        .agents
        .iter()
        .filter(|(n, _)| {
            n != active && inv.tree.get(n).and_then(|i| i.parent.as_deref()) == Some(parent)
        })
        .map(|(n, _)| n.clone())
        .collect();
    for sib in siblings {
        end_subtree_if_idle(inv, &sib, ended);
    }
}

/// Ends the agent spans an `execute_tool` span holds (agents outside the
/// root's tree, run inside that call), and theirs, as that span ends at
/// `end`: a child never outlives its parent, and the agent's next run, in
/// another call, gets a span of its own.
pub fn end_agents_under(
    inv: &mut Invocation,
    tool_span: [u8; 8],
    end: u64,
    ended: &mut Vec<SpanData>,
) {
    if !inv.agents.iter().any(|(_, s)| s.parent == Some(tool_span)) {
        return;
    }
    // Creation order puts a child after its parent.
    let mut held: Vec<[u8; 8]> = Vec::new();
    for (_, s) in &inv.agents {
        if s.parent
            .is_some_and(|p| p == tool_span || held.contains(&p))
        {
            held.push(s.id);
        }
    }
    let mut i = inv.agents.len();
    while i > 0 {
        i -= 1;
        if held.contains(&inv.agents[i].1.id) {
            let (_, span) = inv.agents.remove(i);
            ended.push(span.finish(inv.trace_id, end, inv.limit));
        }
    }
}
