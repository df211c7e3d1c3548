//! The spans of one invocation while it runs: the run root, synthesised agent
//! spans, open model spans (by agent) and tool spans (by call id or a
//! synthetic key). `Tracer` (model.rs) drives it; this file only holds state
//! and the rules that need nothing but that state.

use super::fast_map::FastMap;
use super::inputs::AgentInfo;
use super::open_span::{OpenSpan, ToolSpan};
use super::span::AttributeValue;
use super::streamed::StreamedTurn;

#[derive(Debug)]
pub struct Invocation {
    pub seq: u64,
    pub id: String,
    pub trace_id: [u8; 16],
    /// False when the run joined a parent whose trace is not sampled.
    pub sampled: bool,
    /// The root's parent is a span from outside (`Tracer::join`).
    pub joined: bool,
    /// The joined parent came from another process.
    pub parent_is_remote: bool,
    /// The joined parent's tracestate, registered with the tracer for
    /// every span of this trace (`Tracer::trace_states`).
    pub trace_state: Option<std::sync::Arc<str>>,
    pub capture: bool,
    /// The run streams (SSE): see `RunSettings::streams`.
    pub streams: bool,
    pub provider: &'static str,
    pub limit: Option<usize>,
    pub session_id: Option<String>,
    pub root: OpenSpan,
    /// The agent the run starts at, which the root span is named after: the
    /// runner's agent, or in a resumed session the agent ADK goes on with.
    /// `tree` is the whole tree it belongs to.
    pub root_agent: Option<String>,
    pub tree: FastMap<String, AgentInfo>,
    /// Open agent spans in creation order (a child always after its parent).
    pub agents: Vec<(String, OpenSpan)>,
    /// Agents whose run is over: their final answer came
    /// (`EventInfo::ends_run`) and nothing of theirs since (agents.rs). Read
    /// only for agents with an open span; cleared when one opens.
    pub runs_over: Vec<String>,
    /// (parent, child): a child whose run under the parent's open span is
    /// over; the child running again means the parent ran again.
    pub children_done: Vec<(String, String)>,
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
            span.set_str("gen_ai.conversation.id", sid.as_str());
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
        let open_with_id = |t: &ToolSpan| {
            t.keyed && !t.callbacks_done && call_id.is_some() && t.call_id.as_deref() == call_id
        };
        // The agent's own span first: two agents of one run (parallel
        // branches) may be given the same id by their models.
        self.tools
            .iter()
            .position(|t| open_with_id(t) && t.agent == agent)
            .or_else(|| {
                self.tools.iter().position(|t| {
                    !t.keyed && !t.callbacks_done && t.agent == agent && t.tool == tool
                })
            })
            .or_else(|| self.tools.iter().position(open_with_id))
            .or_else(|| {
                let id = call_id?;
                self.tools
                    .iter()
                    .rposition(|t| t.call_id.as_deref() == Some(id))
            })
    }

    /// Index of the tool span a function response (`id`, `name`) of
    /// `author`'s event ends: that agent's own span first, as in
    /// find_tool_for_callback. The span's afterToolCallback may never have
    /// come (another plugin stopped the chain before this one): the
    /// response ends it all the same.
    pub fn find_tool_for_response(&self, author: &str, id: &str, name: &str) -> Option<usize> {
        let keyed = |t: &ToolSpan| t.keyed && t.call_id.as_deref() == Some(id);
        let unkeyed = |t: &ToolSpan| {
            !t.keyed && t.tool == name && (t.call_id.is_none() || t.call_id.as_deref() == Some(id))
        };
        let find = |of_author: bool| {
            let mine = |t: &ToolSpan| !of_author || t.agent == author;
            self.tools
                .iter()
                .position(|t| mine(t) && keyed(t))
                .or_else(|| {
                    (self.tools.iter()).position(|t| mine(t) && unkeyed(t) && t.callbacks_done)
                })
                .or_else(|| self.tools.iter().position(|t| mine(t) && unkeyed(t)))
        };
        find(true).or_else(|| find(false))
    }
}
