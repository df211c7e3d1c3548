//! The tracer: turns the ADK callbacks of many concurrent invocations into
//! finished spans handed to a `SpanSink`. Every method is cheap and never
//! panics on odd input; heavy JSON work is deferred (genai.rs).

use super::agents::{end_agents_under, end_finished_node, ensure_agent_in, note_run_state};
use super::attributes::{apply_tool_outcome, deferred, ConfigCache};
use super::fast_map::FastMap;
use super::genai::MessageShape;
use super::history::{DeferredHistory, Histories};
use super::ids::IdGen;
pub use super::inputs::*;
use super::invocation::Invocation;
use super::key_text::display;
use super::open_span::{OpenSpan, ToolSpan, INTERRUPTED};
use super::sink::SpanSink;
use super::span::{now_nanos, AttributeValue, SpanData};
use super::streamed::{response_error, Outcome, StreamedTurn};
use super::tool_failure::{is_tool_failure, plugin_tool_error, ToolCallback};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

mod links;

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

/// The Content JSON of an event made only of function responses.
fn responses_content(responses: &[FunctionResponse]) -> String {
    let size: usize = responses.iter().map(|r| r.response_json.len() + 64).sum();
    let mut out = String::with_capacity(size + 32);
    out.push_str(r#"{"role":"user","parts":["#);
    for (i, r) in responses.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"functionResponse":{"id":"#);
        out.push_str(&serde_json::Value::String(display(&r.id).into_owned()).to_string());
        out.push_str(r#","name":"#);
        out.push_str(&serde_json::Value::String(display(&r.name).into_owned()).to_string());
        out.push_str(r#","response":"#);
        out.push_str(if r.response_json.is_empty() {
            "{}"
        } else {
            &r.response_json
        });
        out.push_str("}}");
    }
    out.push_str("]}");
    out
}

/// Ends tool call `i` of `inv` as failed with `error` (type, message) at
/// `now`, unless a tool callback had already failed it (then as it stands,
/// at that callback), and the agents outside the tree it ran.
fn end_failed_tool(
    inv: &mut Invocation,
    i: usize,
    (error_type, message): (&str, &str),
    now: u64,
    ended: &mut Vec<SpanData>,
) {
    let mut t = inv.tools.remove(i);
    let end = if t.errored {
        t.last_callback
    } else {
        t.span.error(error_type, message);
        now
    };
    end_agents_under(inv, t.span.id, end, ended);
    ended.push(t.span.finish(inv.trace_id, end, inv.limit));
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

    /// Returns false when a history delta could not be applied (the
    /// JavaScript side then starts that conversation again in full).
    pub fn before_model(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        mut req: ModelRequest,
    ) -> bool {
        // A delta updates its conversation whatever becomes of the span, so
        // both sides keep holding the same items.
        let mut history = None;
        let mut applied = true;
        if let (Some(delta), Some(suffix)) = (req.history, req.contents_json.as_deref()) {
            history = self.histories.apply(delta, suffix.as_bytes());
            applied = history.is_some();
            req.contents_json = None;
        }
        let Some(parent) = self.ensure_agent(inv_id, agent) else {
            return applied;
        };
        let span_id = self.ids.span_id();
        let Some(inv) = self.open.get_mut(inv_id) else {
            return applied;
        };
        let key = agent.unwrap_or("").to_string();
        let limit = inv.limit;
        let model = non_empty(&req.model).unwrap_or("unknown").to_string();
        let mut span = OpenSpan::new(span_id, Some(parent), format!("chat {model}"), now_nanos());
        inv.common(&mut span, "chat");
        span.set_str("gen_ai.request.model", model);
        if !key.is_empty() {
            span.set_str("gen_ai.agent.name", display(&key));
        }
        if let Some(cfg) = req.config_json.as_deref() {
            for (key, value) in self.configs.attributes(cfg) {
                span.set(key, value.clone());
            }
        }
        if let Some(t) = req.tools_json {
            span.set(
                "gen_ai.tool.definitions",
                deferred(t, MessageShape::ToolDefinitions, limit),
            );
        }
        if inv.capture {
            if let Some(s) = req.system_json {
                span.set(
                    "gen_ai.system_instructions",
                    deferred(s, MessageShape::SystemInstructions, limit),
                );
            }
            if let Some(c) = req.contents_json {
                span.set(
                    "gen_ai.input.messages",
                    deferred(c, MessageShape::InputList, limit),
                );
            } else if let Some(pieces) = history {
                span.set(
                    "gen_ai.input.messages",
                    AttributeValue::Deferred(Arc::new(DeferredHistory { pieces, limit })),
                );
            }
        }
        let previous = match inv.models.iter().position(|(a, _)| *a == key) {
            Some(pos) => Some(inv.models.remove(pos).1.finish(
                inv.trace_id,
                now_nanos(),
                inv.limit,
            )),
            None => None,
        };
        // The agent's next model call: its streamed previous one is over.
        let previous_turn = match inv.streamed.iter().position(|(a, _)| *a == key) {
            Some(pos) => Some(inv.streamed.remove(pos).1.finish(
                inv.trace_id,
                inv.capture,
                limit,
                None,
            )),
            None => None,
        };
        inv.models.push((key, span));
        for p in previous.into_iter().chain(previous_turn) {
            self.emit(p);
        }
        applied
    }

    pub fn after_model(&mut self, inv_id: &str, agent: Option<&str>, resp: ModelResponse) {
        if resp.partial {
            return;
        }
        let key = agent.unwrap_or("");
        let Some(inv) = self.inv(inv_id) else { return };
        let now = now_nanos();
        if inv.streams {
            // The call may answer again: collect until it is over.
            if let Some(pos) = inv.models.iter().position(|(a, _)| a == key) {
                let (key, span) = inv.models.remove(pos);
                let mut turn = StreamedTurn::new(span);
                turn.awaiting_events += u32::from(resp.yields_event);
                turn.add(resp, now);
                inv.streamed.push((key, turn));
            } else if let Some((_, turn)) = inv.streamed.iter_mut().find(|(a, _)| a == key) {
                turn.awaiting_events += u32::from(resp.yields_event);
                turn.add(resp, now);
            }
            return;
        }
        let Some(pos) = inv.models.iter().position(|(a, _)| a == key) else {
            return;
        };
        let (_, mut span) = inv.models.remove(pos);
        let outcome = Outcome {
            finish_reason: resp.finish_reason.as_deref().map(str::to_lowercase),
            usage: resp.usage,
            error: response_error(&resp.error_code, &resp.error_message),
            content: resp.content_json,
            response_id: resp.response_id,
            response_model: resp.response_model,
        };
        outcome.apply(&mut span, inv.capture, inv.limit);
        let data = span.finish(inv.trace_id, now, inv.limit);
        self.emit(data);
    }

    pub fn model_error(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        error_type: &str,
        message: &str,
    ) {
        // A failed tool call, reported as the model's: in a streamed turn
        // tools run inside the model's loop, which is still open; a call
        // that does not stream has ended by then, and ends the same.
        if is_tool_failure(message) {
            return;
        }
        let key = agent.unwrap_or("");
        let Some(inv) = self.inv(inv_id) else { return };
        let data = if let Some(pos) = inv.models.iter().position(|(a, _)| a == key) {
            let (_, mut span) = inv.models.remove(pos);
            span.error(error_type, message);
            span.finish(inv.trace_id, now_nanos(), inv.limit)
        } else if let Some(pos) = inv.streamed.iter().position(|(a, _)| a == key) {
            // A streamed call that failed after some responses.
            let (_, mut turn) = inv.streamed.remove(pos);
            turn.fail(error_type, message, now_nanos());
            turn.finish(inv.trace_id, inv.capture, inv.limit, None)
        } else {
            return;
        };
        self.emit(data);
    }

    pub fn before_tool(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        args_json: Option<String>,
    ) {
        let Some(parent) = self.ensure_agent(inv_id, agent) else {
            return;
        };
        let span_id = self.ids.span_id();
        let Some(inv) = self.open.get_mut(inv_id) else {
            return;
        };
        let call_id = call_id.filter(|c| !c.is_empty());
        let keyed = call_id.is_some_and(|id| {
            !inv.tools
                .iter()
                .any(|t| t.keyed && t.call_id.as_deref() == Some(id))
        });
        let now = now_nanos();
        let shown = display(tool);
        let mut span = OpenSpan::new(span_id, Some(parent), format!("execute_tool {shown}"), now);
        inv.common(&mut span, "execute_tool");
        span.set_str("gen_ai.tool.name", shown);
        if let Some(a) = agent.filter(|a| !a.is_empty()) {
            span.set_str("gen_ai.agent.name", display(a));
        }
        if let Some(id) = call_id {
            span.set_str("gen_ai.tool.call.id", display(id));
        }
        if inv.capture {
            if let Some(a) = args_json {
                span.set_str("gen_ai.tool.call.arguments", a);
            }
        }
        inv.tools.push(ToolSpan {
            span,
            agent: agent.unwrap_or("").to_string(),
            tool: tool.to_string(),
            call_id: call_id.map(str::to_string),
            keyed,
            callbacks_done: false,
            last_callback: now,
            errored: false,
            seen_result: None,
            seen_token: 0,
        });
    }

    pub fn tool_error(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        error_type: &str,
        message: &str,
    ) {
        let Some(inv) = self.inv(inv_id) else { return };
        let Some(i) = inv.find_tool_for_callback(agent.unwrap_or(""), tool, call_id) else {
            return;
        };
        let t = &mut inv.tools[i];
        t.span.error(error_type, message);
        t.errored = true;
        t.last_callback = now_nanos();
    }

    /// `held`: the JavaScript side's handle of the result afterToolCallback
    /// saw (0: none). `supply_seen` brings its JSON only for a span no
    /// function response event ended (the event, when it comes, wins), so
    /// the usual path does not stringify a result twice. `answered`: that
    /// result is a ReflectAndRetryToolPlugin answer to a thrown error (its
    /// type and details): the call failed, as onToolErrorCallback would have
    /// said had the retry plugin, registered first, not answered before
    /// this one saw it; the error stays whatever later replaces the answer.
    pub fn after_tool(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        held: u32,
        answered: Option<(String, String)>,
    ) {
        let Some(inv) = self.inv(inv_id) else { return };
        let Some(i) = inv.find_tool_for_callback(agent.unwrap_or(""), tool, call_id) else {
            return;
        };
        let t = &mut inv.tools[i];
        t.callbacks_done = true;
        t.last_callback = now_nanos();
        if let Some((error_type, message)) = answered.filter(|_| !t.errored) {
            t.span.error(&error_type, &message);
            t.errored = true;
        }
        if held != 0 {
            t.seen_result = None;
            t.seen_token = held;
        }
        // The call is done, and so is any agent outside the tree it ran (its
        // span ends at this callback, whenever its response event comes):
        // the turn's next call running that agent gets a span of its own.
        let (span_id, end) = (t.span.id, t.last_callback);
        let mut ended = Vec::new();
        end_agents_under(inv, span_id, end, &mut ended);
        for s in ended {
            self.emit(s);
        }
    }

    /// The JSON of the held result `token`, for its span if no function
    /// response event ended it (lib/tracing.js supplies the results it
    /// still holds as an invocation ends).
    pub fn supply_seen(&mut self, inv_id: &str, token: u32, result_json: String) {
        if token == 0 {
            return;
        }
        let Some(inv) = self.open.get_mut(inv_id) else {
            return;
        };
        if let Some(t) = inv.tools.iter_mut().find(|t| t.seen_token == token) {
            t.seen_result = Some(result_json);
        }
    }

    pub fn on_event(&mut self, inv_id: &str, ev: EventInfo) {
        if ev.partial {
            return;
        }
        let Some(inv) = self.inv(inv_id) else { return };
        let limit = inv.limit;
        let mut ended = Vec::new();
        let author = ev.author.as_deref().unwrap_or("");
        if ev.error_code.is_some() || ev.error_message.is_some() {
            // tracing.md's `??`: a field that is there counts, even empty
            // (a model error thrown as `new Error('')` has message '').
            let code = ev.error_code.as_deref().unwrap_or("Error").to_string();
            let msg = (ev.error_message.as_deref())
                .or(ev.error_code.as_deref())
                .unwrap_or("ADK event error")
                .to_string();
            // A tool call whose callbacks threw (ReflectAndRetryToolPlugin
            // rethrowing past its limit) gets no function response: this
            // error event of its agent is its outcome, with the thrown
            // error's own name and message when a plugin threw it.
            let thrown = ev.error_message.as_deref().and_then(plugin_tool_error);
            let (tool_code, tool_msg) = match &thrown {
                Some(e) => (e.error_type, e.message),
                None => (code.as_str(), msg.as_str()),
            };
            let trace_id = inv.trace_id;
            let now = now_nanos();
            let before = ended.len();
            let mut i = 0;
            while i < inv.tools.len() {
                let t = &inv.tools[i];
                if t.agent != author || t.callbacks_done {
                    i += 1;
                    continue;
                }
                end_failed_tool(inv, i, (tool_code, tool_msg), now, &mut ended);
            }
            // A Workflow tool node's call has no agent (its callbacks' contexts
            // have none) while its error event's author is the node, no
            // agent: the one such call still open, if the error is ADK's
            // report of that tool's failure, is the one that failed.
            let by_agent = inv.tree.contains_key(author) || inv.agent_span_id(author).is_some();
            if ended.len() == before && !by_agent {
                let mut open = (inv.tools.iter().enumerate())
                    .filter(|(_, t)| t.agent.is_empty() && !t.callbacks_done)
                    .filter(|(_, t)| {
                        // A ToolNode is named after its tool by default; ADK's
                        // FunctionTool reports its failure so.
                        t.tool == author
                            || tool_msg.contains(&format!("Error in tool '{}'", t.tool))
                    })
                    .map(|(i, _)| i);
                if let (Some(i), None) = (open.next(), open.next()) {
                    end_failed_tool(inv, i, (tool_code, tool_msg), now, &mut ended);
                }
            }
            // A plugin registered after this one threw in afterToolCallback:
            // this plugin's had completed the call, the last it completed.
            if ended.len() == before && thrown.is_some_and(|e| e.callback == ToolCallback::After) {
                let last = (inv.tools.iter().enumerate())
                    .filter(|(_, t)| t.agent == author && t.callbacks_done)
                    .max_by_key(|(_, t)| t.last_callback)
                    .map(|(i, _)| i);
                if let Some(i) = last {
                    let mut t = inv.tools.remove(i);
                    t.span.error(tool_code, tool_msg);
                    end_agents_under(inv, t.span.id, now, &mut ended);
                    ended.push(t.span.finish(trace_id, now, limit));
                }
            }
            inv.root_error = Some((code, msg));
        }
        let content = match ev.content_json {
            Some(c) => Some(c),
            None if ev.responses_only && inv.capture && !ev.function_responses.is_empty() => {
                Some(responses_content(&ev.function_responses))
            }
            None => None,
        };
        // A model span that no afterModelCallback closed (another plugin's
        // cached beforeModelCallback response) ends with this event.
        // The "only open model span" fallback is for spans whose agent was
        // unknown; an event of another known agent (a parallel branch) must
        // not close a span still waiting for its model.
        // In a streamed run each event of a call's responses is one of them
        // (streamed.rs): one afterModelCallback already gave adds nothing;
        // one it never gave (an earlier plugin answered it) is added.
        let response_event = inv.streams
            && !ev.responses_only
            && ev.function_responses.is_empty()
            && (ev.ends_run.is_some() || ev.has_usage || ev.finish_reason.is_some());
        let response = |content: &Option<String>| ModelResponse {
            partial: false,
            finish_reason: ev.finish_reason.clone(),
            usage: ev.usage,
            error_code: ev.error_code.clone(),
            error_message: ev.error_message.clone(),
            content_json: if inv.capture { content.clone() } else { None },
            has_usage: ev.has_usage,
            yields_event: false,
            ..ModelResponse::default()
        };
        let mut fed_turn = false;
        if response_event {
            let answer = response(&content);
            if let Some((_, turn)) = inv.streamed.iter_mut().find(|(a, _)| a == author) {
                if turn.awaiting_events > 0 {
                    turn.awaiting_events -= 1;
                } else if !turn.finished_by_model() || ev.ends_run.is_none() {
                    // A call that said it was done still closes with usage
                    // alone (ADK's close() after the tools ran).
                    turn.add(answer, now_nanos());
                }
                // Else parts after the call said it was done: not the call's
                // (an event the agent's own callback sends, say).
                fed_turn = true;
            }
        }
        let known_author = inv.tree.contains_key(author) || inv.agent_span_id(author).is_some();
        let pos = (inv.models.iter())
            .position(|(a, _)| a == author)
            .or(match inv.models.as_slice() {
                [(key, _)] if key.is_empty() || !known_author => Some(0),
                _ => None,
            })
            .filter(|_| !fed_turn);
        if let Some(pos) = pos.filter(|_| response_event) {
            // A streamed call's first response, which afterModelCallback
            // never gave: the call may answer again.
            let (key, span) = inv.models.remove(pos);
            let mut turn = StreamedTurn::new(span);
            turn.add(response(&content), now_nanos());
            inv.streamed.push((key, turn));
        } else if let Some(pos) = pos {
            // The event is the response afterModelCallback never saw.
            let (_, mut span) = inv.models.remove(pos);
            let outcome = Outcome {
                finish_reason: ev.finish_reason.as_deref().map(str::to_lowercase),
                usage: ev.usage,
                error: response_error(&ev.error_code, &ev.error_message),
                content: if inv.capture { content.clone() } else { None },
                response_id: None,
                response_model: None,
            };
            outcome.apply(&mut span, inv.capture, limit);
            ended.push(span.finish(inv.trace_id, now_nanos(), limit));
        }
        for fr in ev.function_responses {
            let Some(i) = inv.find_tool_for_response(author, &fr.id, &fr.name) else {
                continue;
            };
            let mut t = inv.tools.remove(i);
            apply_tool_outcome(&mut t, fr.response_json, inv.capture);
            end_agents_under(inv, t.span.id, t.last_callback, &mut ended);
            ended.push(t.span.finish(inv.trace_id, t.last_callback, limit));
        }
        if content.is_some() {
            inv.last_output = content;
        }
        if let (None, None, Some(ends_run)) = (&ev.error_code, &ev.error_message, ev.ends_run) {
            note_run_state(inv, author, ends_run);
        }
        for s in ended {
            self.emit(s);
        }
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
