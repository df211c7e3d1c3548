//! The tracer: turns the ADK callbacks of many concurrent invocations into
//! finished spans handed to a `SpanSink`. Every method is cheap and never
//! panics on odd input; heavy JSON work is deferred (genai.rs).

use super::agents::{end_agents_under, end_finished_node, ensure_agent_in};
use super::attributes::{apply_tool_outcome, deferred, ConfigCache};
use super::fast_map::FastMap;
use super::genai::MessageShape;
use super::history::Histories;
use super::ids::IdGen;
pub use super::inputs::*;
use super::invocation::Invocation;
use super::key_text::display;
use super::open_span::{OpenSpan, INTERRUPTED};
use super::sink::SpanSink;
use super::span::{now_nanos, AttributeValue, SpanData};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

mod events;
mod links;
mod model_calls;
mod tool_calls;

/// How many finished invocation ids are remembered, with their trace ids:
/// late callbacks of a finished invocation do not open a new one, and
/// `trace_id_of` answers for them (api.md: the last 10,000).
const RECENTLY_FINISHED: usize = 10_000;
/// When the finished ids get room for all `RECENTLY_FINISHED` at once.
const SIZE_FINISHED_AT: usize = 1_024;

pub struct Tracer {
    sink: Arc<dyn SpanSink>,
    ids: IdGen,
    open: FastMap<String, Invocation>,
    order: BTreeMap<u64, String>,
    next_seq: u64,
    finished: FastMap<String, [u8; 16]>,
    finished_order: VecDeque<String>,
    /// Trace ids of open invocations whose remote parent is not sampled,
    /// with how many such invocations: their spans are not handed over.
    unsampled: HashMap<[u8; 16], u32>,
    /// The tracestate of traces open runs joined, with how many such runs:
    /// every span of those traces carries it.
    trace_states: HashMap<[u8; 16], (Arc<str>, u32)>,
    max_open: usize,
    stopped: bool,
    ended_spans: u64,
    histories: Histories,
    configs: ConfigCache,
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

impl Tracer {
    pub fn new(sink: Arc<dyn SpanSink>, max_open: usize) -> Self {
        Tracer {
            sink,
            ids: IdGen::new(),
            open: FastMap::default(),
            order: BTreeMap::new(),
            next_seq: 0,
            finished: FastMap::default(),
            finished_order: VecDeque::new(),
            unsampled: HashMap::new(),
            trace_states: HashMap::new(),
            max_open: max_open.max(1),
            stopped: false,
            ended_spans: 0,
            histories: Histories::default(),
            configs: ConfigCache::default(),
        }
    }

    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// Spans handed to the sink so far.
    pub fn ended_spans(&self) -> u64 {
        self.ended_spans
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    pub fn sink(&self) -> &Arc<dyn SpanSink> {
        &self.sink
    }

    /// Later calls are no-ops (after `shutdown`).
    pub fn stop(&mut self) {
        self.finish_all(true);
        self.stopped = true;
    }

    fn emit(&mut self, mut span: SpanData) {
        if !self.unsampled.is_empty() && self.unsampled.contains_key(&span.trace_id) {
            return;
        }
        if !self.trace_states.is_empty() {
            if let Some((state, _)) = self.trace_states.get(&span.trace_id) {
                span.trace_state = Some(state.clone());
            }
        }
        self.ended_spans += 1;
        self.sink.on_end(span);
    }

    /// Starts (or completes the details of) an invocation.
    pub fn start(&mut self, run: RunStart) {
        if self.stopped || self.finished.contains_key(&run.invocation_id) {
            return;
        }
        let limit = run.settings.value_limit;
        if !self.open.contains_key(&run.invocation_id) {
            while self.open.len() >= self.max_open {
                let Some((_, oldest)) = self.order.pop_first() else {
                    break;
                };
                self.finish(&oldest, true);
            }
            self.create(&run.invocation_id, run.settings, run.session_id.clone());
        }
        if let Some(parent) = run.remote_parent {
            self.join(&run.invocation_id, parent);
        }
        let Some(inv) = self.open.get_mut(&run.invocation_id) else {
            return;
        };
        if run.session_id.is_some() && inv.session_id.is_none() {
            inv.session_id = run.session_id.clone();
            let mut root =
                std::mem::replace(&mut inv.root, OpenSpan::new([0; 8], None, String::new(), 0));
            inv.common(&mut root, "invoke_agent");
            inv.root = root;
        }
        let named = non_empty(&run.root_name);
        if let Some(name) = named {
            inv.root_agent = Some(name.to_string());
            inv.root.name = format!("invoke_agent {name}");
            inv.root.set_str("gen_ai.agent.name", name);
        }
        let root = &mut inv.root;
        match &run.root_description {
            Some(d) => root.set_str("gen_ai.agent.description", d.as_str()),
            // A repeated start naming another agent (a resumed session's)
            // keeps no description of the first.
            None if named.is_some() => root.remove("gen_ai.agent.description"),
            None => {}
        }
        if let Some(a) = &run.app_name {
            root.set_str("weave.google_adk.app_name", a.as_str());
        }
        if let Some(u) = &run.user_id {
            root.set_str("weave.google_adk.user_id", u.as_str());
        }
        if inv.capture {
            if let Some(c) = run.user_content {
                root.set(
                    "gen_ai.input.messages",
                    deferred(c, MessageShape::InputOne, limit),
                );
            }
        }
        for a in run.agents {
            inv.tree.entry(a.name.clone()).or_insert(a);
        }
    }

    /// Makes the root of a just started invocation a child of `parent`, in
    /// its trace. Only while the root has no parent yet (whatever gave it
    /// one first wins) and no other span exists: spans already handed over
    /// stay in the trace they were given.
    fn join(&mut self, id: &str, parent: RemoteParent) {
        let Some(inv) = self.open.get_mut(id) else {
            return;
        };
        if inv.root.parent.is_some()
            || !inv.agents.is_empty()
            || !inv.models.is_empty()
            || !inv.tools.is_empty()
        {
            return;
        }
        inv.trace_id = parent.trace_id;
        inv.root.parent = Some(parent.span_id);
        inv.sampled = parent.sampled;
        inv.joined = true;
        inv.parent_is_remote = parent.is_remote;
        let state = parent.trace_state.filter(|s| !s.is_empty());
        inv.trace_state.clone_from(&state);
        if !parent.sampled {
            self.note_unsampled(parent.trace_id);
        }
        if let Some(state) = state {
            self.trace_states
                .entry(parent.trace_id)
                .or_insert((state, 0))
                .1 += 1;
        }
    }

    /// A run that registered the tracestate of `trace_id` ended or left it.
    fn forget_trace_state(&mut self, trace_id: [u8; 16]) {
        if let Some((_, n)) = self.trace_states.get_mut(&trace_id) {
            *n -= 1;
            if *n == 0 {
                self.trace_states.remove(&trace_id);
            }
        }
    }

    /// The trace id of an open invocation, or of one of the last
    /// `RECENTLY_FINISHED` finished, whether or not its spans are exported.
    pub fn trace_id_of(&self, id: &str) -> Option<[u8; 16]> {
        match self.open.get(id) {
            Some(inv) => Some(inv.trace_id),
            None => self.finished.get(id).copied(),
        }
    }

    /// Adds agents to an invocation's tree (a Workflow root has no agent of
    /// its own: its agents' trees are learnt from their callbacks).
    pub fn add_agents(&mut self, inv_id: &str, agents: Vec<AgentInfo>) {
        let Some(inv) = self.inv(inv_id) else { return };
        for a in agents {
            inv.tree.entry(a.name.clone()).or_insert(a);
        }
    }

    /// The invocation `id`, created on the fly when a callback arrives for a
    /// run whose start this plugin did not see. `None` once finished.
    fn inv(&mut self, id: &str) -> Option<&mut Invocation> {
        if self.stopped {
            return None;
        }
        // An id is never open and finished at once: the finished map is
        // only asked about ids that are not open.
        if !self.open.contains_key(id) {
            if self.finished.contains_key(id) {
                return None;
            }
            while self.open.len() >= self.max_open {
                let (_, oldest) = self.order.pop_first()?;
                self.finish(&oldest, true);
            }
            self.create(id, RunSettings::default(), None);
        }
        self.open.get_mut(id)
    }

    fn create(&mut self, id: &str, settings: RunSettings, session_id: Option<String>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut inv = Invocation {
            seq,
            id: id.to_string(),
            trace_id: self.ids.trace_id(),
            sampled: true,
            joined: false,
            parent_is_remote: false,
            trace_state: None,
            capture: settings.capture,
            streams: settings.streams,
            provider: if settings.vertex {
                "vertex_ai"
            } else {
                "gemini"
            },
            limit: settings.value_limit,
            session_id,
            root: OpenSpan::new(self.ids.span_id(), None, "invoke_agent".into(), now_nanos()),
            tree: FastMap::default(),
            agents: Vec::new(),
            runs_over: Vec::new(),
            children_done: Vec::new(),
            models: Vec::new(),
            streamed: Vec::new(),
            tools: Vec::new(),
            root_error: None,
            last_output: None,
            parent: None,
            children: Vec::new(),
            root_agent: None,
        };
        let mut root =
            std::mem::replace(&mut inv.root, OpenSpan::new([0; 8], None, String::new(), 0));
        inv.common(&mut root, "invoke_agent");
        root.set_str("gen_ai.agent.id", display(id));
        root.set_str("weave.google_adk.invocation_id", display(id));
        inv.root = root;
        self.order.insert(seq, id.to_string());
        self.open.insert(id.to_string(), inv);
    }

    /// The agent span of `name`, synthesised (with its ancestors) if missing.
    fn ensure_agent(&mut self, inv_id: &str, name: Option<&str>) -> Option<[u8; 8]> {
        let name = name.filter(|n| !n.is_empty());
        self.inv(inv_id)?;
        let inv = self.open.get_mut(inv_id)?;
        let Some(name) = name else {
            return Some(inv.root.id);
        };
        let mut ended = Vec::new();
        let id = ensure_agent_in(inv, &mut self.ids, name, 0, &mut ended);
        for s in ended {
            self.emit(s);
        }
        Some(id)
    }

    pub fn before_agent(&mut self, inv_id: &str, name: Option<&str>) {
        self.ensure_agent(inv_id, name);
    }

    pub fn after_agent(&mut self, inv_id: &str, name: Option<&str>) {
        let Some(name) = name else { return };
        let Some(inv) = self.inv(inv_id) else { return };
        // The agent is done: so is a streamed model call of it.
        let turn = match inv.streamed.iter().position(|(a, _)| a == name) {
            Some(pos) => Some(inv.streamed.remove(pos).1.finish(
                inv.trace_id,
                inv.capture,
                inv.limit,
                None,
            )),
            None => None,
        };
        let agent = match inv.agents.iter().position(|(n, _)| n == name) {
            Some(pos) => Some(inv.agents.remove(pos).1.finish(
                inv.trace_id,
                now_nanos(),
                inv.limit,
            )),
            None => None,
        };
        for data in turn.into_iter().chain(agent) {
            self.emit(data);
        }
    }

    /// A Workflow node that is an agent completed (afterNodeCallback):
    /// ADK 2.0.0 dispatches no agent callbacks for it, and this is when it
    /// demonstrably finished (agents.rs `end_finished_node`).
    pub fn agent_node_done(&mut self, inv_id: &str, name: &str) {
        let Some(inv) = self.inv(inv_id) else { return };
        let mut ended = Vec::new();
        end_finished_node(inv, name, &mut ended);
        for s in ended {
            self.emit(s);
        }
    }

    /// Drops a conversation slot's kept items (history.rs).
    pub fn forget_history(&mut self, slot: u32) {
        self.histories.forget(slot);
    }

    /// Conversation slots holding items.
    pub fn history_count(&self) -> usize {
        self.histories.len()
    }

    /// Ends the invocation: idempotent, a no-op for unknown ids.
    pub fn finish(&mut self, inv_id: &str, interrupted: bool) {
        let Some(mut inv) = self.open.remove(inv_id) else {
            return;
        };
        self.unlink(&mut inv);
        self.order.remove(&inv.seq);
        self.finished.insert(inv.id.clone(), inv.trace_id);
        self.finished_order.push_back(inv.id.clone());
        if self.finished_order.len() == SIZE_FINISHED_AT {
            // Grown by doubling all the way, the map and queue were
            // re-allocated and copied while a service's first thousands of
            // runs were traced (a sixth of the tracing thread's time over
            // 8,000 scripted runs). Sized at the start, they would cost every
            // tracer a megabyte, used or not.
            let rest = RECENTLY_FINISHED + 1 - SIZE_FINISHED_AT;
            self.finished.reserve(rest);
            self.finished_order.reserve(rest);
        }
        while self.finished_order.len() > RECENTLY_FINISHED {
            if let Some(old) = self.finished_order.pop_front() {
                self.finished.remove(&old);
            }
        }
        let limit = inv.limit;
        let now = now_nanos();
        let trace_id = inv.trace_id;
        if inv.capture {
            if let Some(out) = inv.last_output.take() {
                inv.root.set(
                    "gen_ai.output.messages",
                    deferred(
                        out,
                        // The root's output is the last event's content:
                        // no finish reason of its own (Weave writes "").
                        MessageShape::OutputOne {
                            finish_reason: String::new(),
                        },
                        limit,
                    ),
                );
                inv.root
                    .set("gen_ai.output.type", AttributeValue::String("text".into()));
            }
        }
        if let Some((t, m)) = inv.root_error.take() {
            inv.root.error(&t, &m);
        }
        for (_, mut span) in inv.models.drain(..) {
            span.set(INTERRUPTED, AttributeValue::Bool(true));
            let d = span.finish(trace_id, now, limit);
            self.emit(d);
        }
        let capture = inv.capture;
        for (_, turn) in inv.streamed.drain(..) {
            // Cut off before the model said it was done: interrupted.
            let cut = (interrupted && !turn.finished_by_model()).then_some(now);
            let d = turn.finish(trace_id, capture, limit, cut);
            self.emit(d);
        }
        let mut ended = Vec::new();
        for mut t in std::mem::take(&mut inv.tools) {
            // A tool callback that ran (after, or on error) completed it;
            // no function response came: the result afterToolCallback saw.
            let end = if t.callbacks_done || t.errored {
                if let Some(result) = t.seen_result.take() {
                    apply_tool_outcome(&mut t, result, capture);
                }
                t.last_callback
            } else {
                t.span.set(INTERRUPTED, AttributeValue::Bool(true));
                now
            };
            end_agents_under(&mut inv, t.span.id, end, &mut ended);
            ended.push(t.span.finish(trace_id, end, limit));
        }
        for d in ended {
            self.emit(d);
        }
        while let Some((_, span)) = inv.agents.pop() {
            let d = span.finish(trace_id, now, limit);
            self.emit(d);
        }
        if interrupted {
            inv.root.set(INTERRUPTED, AttributeValue::Bool(true));
        }
        let mut d = inv.root.finish(trace_id, now, limit);
        d.remote_parent = inv.joined;
        d.parent_is_remote = inv.joined && inv.parent_is_remote;
        self.emit(d);
        if !inv.sampled {
            self.forget_unsampled(trace_id);
        }
        if inv.trace_state.is_some() {
            self.forget_trace_state(trace_id);
        }
    }

    /// Every open run that is not sampled holds one count on its trace id.
    fn note_unsampled(&mut self, trace_id: [u8; 16]) {
        *self.unsampled.entry(trace_id).or_insert(0) += 1;
    }

    /// An unsampled run of `trace_id` ended (or left that trace).
    fn forget_unsampled(&mut self, trace_id: [u8; 16]) {
        if let Some(n) = self.unsampled.get_mut(&trace_id) {
            *n -= 1;
            if *n == 0 {
                self.unsampled.remove(&trace_id);
            }
        }
    }

    pub fn finish_all(&mut self, interrupted: bool) {
        let ids: Vec<String> = self.order.values().cloned().collect();
        for id in ids {
            self.finish(&id, interrupted);
        }
    }
}
