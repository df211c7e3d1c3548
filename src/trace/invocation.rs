//! The spans of one invocation while it runs: the run root, synthesised agent
//! spans, open model spans (by agent) and tool spans (by call id or a
//! synthetic key). `Tracer` (model.rs) drives it; this file only holds state
//! and the rules that need nothing but that state.

use super::genai::truncate;
use super::span::{AttributeValue, SpanData, Status, StatusCode};
use super::streamed::StreamedTurn;
use std::collections::HashMap;

pub const INTERRUPTED: &str = "weave.google_adk.interrupted";

/// One agent of the root agent's tree, as the JavaScript side flattened it.
#[derive(Clone, Debug, Default)]
pub struct AgentInfo {
    pub name: String,
    pub parent: Option<String>,
    pub description: Option<String>,
    /// `agent.model` when it is a string.
    pub model: Option<String>,
    /// Whether the agent runs its sub-agents one after another
    /// (SequentialAgent, LoopAgent): then a sibling becoming active means
    /// the previous one finished.
    pub sequential: bool,
}

/// A span being recorded.
#[derive(Debug)]
pub struct OpenSpan {
    pub id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub start: u64,
    pub attrs: Vec<(String, AttributeValue)>,
    pub status: Status,
}

impl OpenSpan {
    pub fn new(id: [u8; 8], parent: Option<[u8; 8]>, name: String, start: u64) -> Self {
        OpenSpan {
            id,
            parent,
            name,
            start,
            attrs: Vec::with_capacity(12),
            status: Status::default(),
        }
    }

    /// Sets (or replaces) an attribute.
    pub fn set(&mut self, key: &str, value: AttributeValue) {
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
        } else {
            self.attrs.push((key.to_string(), value));
        }
    }

    pub fn set_str(&mut self, key: &str, value: impl Into<String>, limit: Option<usize>) {
        self.set(key, AttributeValue::String(truncate(value.into(), limit)));
    }

    pub fn error(&mut self, error_type: &str, message: &str, limit: Option<usize>) {
        self.set_str("error.type", error_type, limit);
        self.status = Status {
            code: StatusCode::Error,
            message: Some(message.to_string()),
        };
    }

    pub fn finish(self, trace_id: [u8; 16], end: u64) -> SpanData {
        SpanData {
            trace_id,
            span_id: self.id,
            parent_span_id: self.parent,
            name: self.name,
            start_time_unix_nano: self.start,
            end_time_unix_nano: end.max(self.start),
            attributes: self.attrs,
            status: self.status,
            remote_parent: false,
        }
    }
}

#[derive(Debug)]
pub struct ToolSpan {
    pub span: OpenSpan,
    pub agent: String,
    pub tool: String,
    /// The function call id the model gave, if any.
    pub call_id: Option<String>,
    /// False when the id was missing or already taken by an open span: the
    /// span is then matched first-in first-out per (agent, tool).
    pub keyed: bool,
    /// `afterToolCallback` ran: the span waits only for its function response.
    pub callbacks_done: bool,
    pub last_callback: u64,
    pub errored: bool,
    /// The result afterToolCallback saw, as JSON: the span's outcome when no
    /// function response event brings one.
    pub seen_result: Option<String>,
    /// The JavaScript side's handle of that result, not yet made JSON (0:
    /// none): asked for only when the invocation ends without the event.
    pub seen_token: u32,
}

#[derive(Debug)]
pub struct Invocation {
    pub seq: u64,
    pub id: String,
    pub trace_id: [u8; 16],
    /// False when the run joined a parent whose trace is not sampled.
    pub sampled: bool,
    /// The root's parent is a span from outside (`Tracer::join`).
    pub joined: bool,
    pub capture: bool,
    pub provider: &'static str,
    pub limit: Option<usize>,
    pub session_id: Option<String>,
    pub root: OpenSpan,
    pub tree: HashMap<String, AgentInfo>,
    /// Open agent spans in creation order (a child always after its parent).
    pub agents: Vec<(String, OpenSpan)>,
    /// Model spans waiting for their first response, by agent.
    pub models: Vec<(String, OpenSpan)>,
    /// Streamed model calls that had a response, by agent (streamed.rs).
    pub streamed: Vec<(String, StreamedTurn)>,
    pub tools: Vec<ToolSpan>,
    pub root_error: Option<(String, String)>,
    pub last_output: Option<String>,
    /// The invocation whose AgentTool call started this one (model/links.rs).
    pub parent: Option<String>,
    /// Open invocations started by this one's AgentTool calls: ended with it.
    pub children: Vec<String>,
}

impl Invocation {
    /// The attributes every span of this invocation carries.
    pub fn common(&self, span: &mut OpenSpan, operation: &str) {
        span.set(
            "gen_ai.operation.name",
            AttributeValue::String(operation.to_string()),
        );
        span.set(
            "gen_ai.provider.name",
            AttributeValue::String(self.provider.to_string()),
        );
        if let Some(sid) = &self.session_id {
            span.set_str("gen_ai.conversation.id", sid.as_str(), self.limit);
        }
    }

    pub fn agent_span_id(&self, name: &str) -> Option<[u8; 8]> {
        self.agents
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.id)
    }

    /// The most recently started tool span still open (an agent behind an
    /// AgentTool runs inside it).
    pub fn innermost_open_tool(&self) -> Option<[u8; 8]> {
        self.tools
            .iter()
            .rev()
            .find(|t| !t.callbacks_done)
            .map(|t| t.span.id)
    }

    /// Whether `name` is `ancestor` or below it in the agent tree.
    pub fn is_under(&self, name: &str, ancestor: &str) -> bool {
        let mut cur = Some(name.to_string());
        for _ in 0..64 {
            match cur {
                Some(ref n) if n == ancestor => return true,
                Some(n) => cur = self.tree.get(&n).and_then(|i| i.parent.clone()),
                None => return false,
            }
        }
        false
    }

    pub fn agent_busy(&self, name: &str) -> bool {
        self.models.iter().any(|(a, _)| a == name) || self.tools.iter().any(|t| t.agent == name)
    }

    /// Index of the tool span a tool callback belongs to.
    pub fn find_tool_for_callback(
        &self,
        agent: &str,
        tool: &str,
        call_id: Option<&str>,
    ) -> Option<usize> {
        if let Some(id) = call_id {
            if let Some(i) = self
                .tools
                .iter()
                .position(|t| t.keyed && !t.callbacks_done && t.call_id.as_deref() == Some(id))
            {
                return Some(i);
            }
        }
        self.tools
            .iter()
            .position(|t| !t.keyed && !t.callbacks_done && t.agent == agent && t.tool == tool)
            .or_else(|| {
                let id = call_id?;
                self.tools
                    .iter()
                    .rposition(|t| t.call_id.as_deref() == Some(id))
            })
    }

    /// Index of the tool span a function response (`id`, `name`) ends. The
    /// span's afterToolCallback may never have come (another plugin stopped
    /// the chain before this one): the response ends it all the same.
    pub fn find_tool_for_response(&self, id: &str, name: &str) -> Option<usize> {
        let unkeyed = |t: &ToolSpan| {
            !t.keyed && t.tool == name && (t.call_id.is_none() || t.call_id.as_deref() == Some(id))
        };
        self.tools
            .iter()
            .position(|t| t.keyed && t.call_id.as_deref() == Some(id))
            .or_else(|| {
                self.tools
                    .iter()
                    .position(|t| unkeyed(t) && t.callbacks_done)
            })
            .or_else(|| self.tools.iter().position(unkeyed))
    }
}
