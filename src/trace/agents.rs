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
        return id;
    }
    let info = inv.tree.get(name).cloned();
    let parent_id = match &info {
        _ if depth > 64 => inv.root.id,
        Some(AgentInfo {
            parent: Some(p), ..
        }) if inv.tree.contains_key(p) => {
            let p = p.clone();
            close_finished_siblings(inv, &p, name, ended);
            ensure_agent_in(inv, ids, &p, depth + 1, ended)
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
    inv.agents.push((name.to_string(), span));
    id
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
        let subtree: Vec<String> = inv
            .agents
            .iter()
            .filter(|(n, _)| inv.is_under(n, &sib))
            .map(|(n, _)| n.clone())
            .collect();
        if subtree.iter().any(|n| inv.agent_busy(n)) {
            continue;
        }
        let now = now_nanos();
        let mut i = inv.agents.len();
        while i > 0 {
            i -= 1;
            if subtree.contains(&inv.agents[i].0) {
                let (_, span) = inv.agents.remove(i);
                ended.push(span.finish(inv.trace_id, now, inv.limit));
            }
        }
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
