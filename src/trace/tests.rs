//! Span model tests: the tree, the close rules and end-of-invocation order.

use super::inputs::AgentInfo;
use super::model::*;
use super::open_span::INTERRUPTED;
use super::span::{AttributeValue, SpanData, StatusCode};
use super::test_support::*;
use std::sync::Arc;

fn tracer() -> (Tracer, Arc<Recorder>) {
    recording_tracer(10)
}

fn agent(name: &str, parent: Option<&str>, sequential: bool) -> AgentInfo {
    AgentInfo {
        name: name.into(),
        parent: parent.map(Into::into),
        description: Some(format!("{name} desc")),
        model: Some("m".into()),
        sequential,
        looping: false,
    }
}

fn start(t: &mut Tracer, id: &str, agents: Vec<AgentInfo>) {
    let root = agents.first().map(|a| a.name.clone());
    start_named(t, id, root, agents);
}

/// A run whose root is named `root` (the agent it starts at).
fn start_named(t: &mut Tracer, id: &str, root: Option<String>, agents: Vec<AgentInfo>) {
    t.start(RunStart {
        invocation_id: id.into(),
        session_id: Some("s1".into()),
        app_name: Some("app".into()),
        user_id: Some("u".into()),
        root_name: root,
        root_description: None,
        agents,
        user_content: Some(r#"{"role":"user","parts":[{"text":"hi"}]}"#.into()),
        settings: RunSettings::default(),
        remote_parent: None,
    });
}

fn by_name<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

fn response(id: &str, name: &str, json: &str) -> EventInfo {
    EventInfo {
        author: Some("a".into()),
        function_responses: vec![FunctionResponse {
            id: id.into(),
            name: name.into(),
            response_json: json.into(),
        }],
        ..Default::default()
    }
}

/// The spans of a run started at `sub` (a resumed session's agent) in the
/// tree top → {sub, peer → helper}, in which `models` call their models.
fn run_started_at_sub(models: &[&str]) -> Vec<SpanData> {
    let tree = || {
        vec![
            agent("top", None, false),
            agent("sub", Some("top"), false),
            agent("peer", Some("top"), false),
            agent("helper", Some("peer"), false),
        ]
    };
    let (mut t, sink) = tracer();
    // onUserMessageCallback's start names the runner's agent, beforeRunCallback's the one ADK resumes at.
    start_named(&mut t, "i1", Some("top".into()), tree());
    start_named(&mut t, "i1", Some("sub".into()), tree());
    for name in models {
        t.before_model("i1", Some(name), ModelRequest::default());
    }
    t.finish("i1", false);
    sink.spans()
}

fn root_of(spans: &[SpanData]) -> &SpanData {
    spans
        .iter()
        .find(|s| s.parent_span_id.is_none())
        .expect("the root")
}

fn agent_span<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == format!("invoke_agent {name}") && s.parent_span_id.is_some())
        .unwrap_or_else(|| panic!("no agent span {name}"))
}

/// A resumed run hangs under its root; an agent above it gets a span only
/// when it runs, and an agent outside its sub-tree nests by the tree.
#[test]
fn a_run_started_below_the_top_makes_no_span_for_agents_above_it_that_did_not_run() {
    // sub hands over to its peer, which hands over to helper.
    let spans = run_started_at_sub(&["sub", "peer", "helper"]);
    let root = root_of(&spans);
    assert_eq!(root.name, "invoke_agent sub");
    assert_eq!(agent_span(&spans, "sub").parent_span_id, Some(root.span_id));
    assert_eq!(
        agent_span(&spans, "peer").parent_span_id,
        Some(root.span_id)
    );
    assert_eq!(
        agent_span(&spans, "helper").parent_span_id,
        Some(agent_span(&spans, "peer").span_id)
    );
    assert_eq!(
        text(agent_span(&spans, "peer"), "gen_ai.agent.description").unwrap(),
        "peer desc"
    );
    assert!(spans.iter().all(|s| s.name != "invoke_agent top"));
    // sub hands back to top, which runs: its span, and what it hands over
    // to nests under it.
    let spans = run_started_at_sub(&["sub", "top", "peer"]);
    let root = root_of(&spans);
    assert_eq!(agent_span(&spans, "top").parent_span_id, Some(root.span_id));
    assert_eq!(
        agent_span(&spans, "peer").parent_span_id,
        Some(agent_span(&spans, "top").span_id)
    );
}

#[test]
fn single_agent_with_a_tool() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_model(
        "i1",
        Some("a"),
        ModelRequest {
            model: Some("gem".into()),
            config_json: Some(
                r#"{"temperature":0.5,"maxOutputTokens":9,"stopSequences":["x"]}"#.into(),
            ),
            tools_json: Some(r#"[{"functionDeclarations":[{"name":"f"}]}]"#.into()),
            system_json: None,
            contents_json: Some(r#"[{"role":"user","parts":[{"text":"hi"}]}]"#.into()),
            history: None,
        },
    );
    t.after_model(
        "i1",
        Some("a"),
        ModelResponse {
            finish_reason: Some("STOP".into()),
            usage: [Some(3), Some(4), Some(7), None, None],
            ..Default::default()
        },
    );
    t.before_tool("i1", Some("a"), "f", Some("c1"), Some("{}".into()));
    t.after_tool("i1", Some("a"), "f", Some("c1"), 0, None);
    t.on_event("i1", response("c1", "f", r#"{"ok":1}"#));
    t.finish("i1", false);
    let spans = sink.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "chat gem",
            "execute_tool f",
            "invoke_agent a",
            "invoke_agent a"
        ]
    );
    let root = spans.last().unwrap();
    assert!(root.parent_span_id.is_none());
    let agent_span = &spans[2];
    assert_eq!(agent_span.parent_span_id, Some(root.span_id));
    assert_eq!(spans[0].parent_span_id, Some(agent_span.span_id));
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id));
    let chat = &spans[0];
    assert!(
        matches!(chat.attribute("gen_ai.request.temperature"), Some(AttributeValue::Double(v)) if *v == 0.5)
    );
    assert!(matches!(
        chat.attribute("gen_ai.request.max_tokens"),
        Some(AttributeValue::Int(9))
    ));
    assert!(
        matches!(chat.attribute("gen_ai.response.finish_reasons"), Some(AttributeValue::StringArray(v)) if v == &["stop"])
    );
    assert_eq!(
        text(chat, "gen_ai.tool.definitions").unwrap(),
        r#"[{"name":"f","description":"","parameters":null,"type":"function"}]"#
    );
    assert_eq!(
        text(chat, "gen_ai.input.messages").unwrap(),
        r#"[{"role":"user","parts":[{"type":"text","content":"hi"}]}]"#
    );
    let tool = &spans[1];
    assert_eq!(
        text(tool, "gen_ai.tool.call.result").unwrap(),
        r#"{"ok":1}"#
    );
    assert_eq!(text(tool, "gen_ai.tool.call.id").unwrap(), "c1");
    assert!(root.attribute(INTERRUPTED).is_none());
    assert_eq!(text(root, "gen_ai.conversation.id").unwrap(), "s1");
    assert_eq!(t.open_count(), 0);
}

#[test]
fn interrupted_end_order_and_idempotence() {
    let (mut t, sink) = tracer();
    start(
        &mut t,
        "i1",
        vec![agent("a", None, false), agent("b", Some("a"), false)],
    );
    t.before_model("i1", Some("b"), ModelRequest::default());
    t.before_tool("i1", Some("b"), "f", Some("c1"), None);
    t.on_event(
        "i1",
        EventInfo {
            error_code: Some("E1".into()),
            author: Some("zzz".into()),
            ..Default::default()
        },
    );
    t.finish("i1", true);
    t.finish("i1", true);
    t.before_model("i1", Some("b"), ModelRequest::default());
    let spans = sink.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    // The model span was closed by the error event (the only open one).
    assert_eq!(
        names,
        [
            "chat unknown",
            "execute_tool f",
            "invoke_agent b",
            "invoke_agent a",
            "invoke_agent a"
        ]
    );
    assert!(matches!(
        spans[1].attribute(INTERRUPTED),
        Some(AttributeValue::Bool(true))
    ));
    assert!(spans[2].attribute(INTERRUPTED).is_none());
    let root = &spans[4];
    assert!(matches!(
        root.attribute(INTERRUPTED),
        Some(AttributeValue::Bool(true))
    ));
    assert_eq!(root.status.code, StatusCode::Error);
    assert_eq!(root.status.message.as_deref(), Some("E1"));
    assert_eq!(text(root, "error.type").unwrap(), "E1");
    assert_eq!(t.open_count(), 0);
}

#[test]
fn tool_error_then_retry_response_and_duplicate_ids() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.tool_error("i1", Some("a"), "f", Some("c1"), "Error", "boom");
    t.after_tool("i1", Some("a"), "f", Some("c1"), 0, None);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None); // duplicate id
    t.after_tool("i1", Some("a"), "f", Some("c1"), 0, None);
    let retry = r#"{"response_type":"ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN","error_type":"Error","error_details":"boom","retry_count":1,"reflection_guidance":"The call to tool `f` failed."}"#;
    t.on_event("i1", response("c1", "f", retry));
    t.on_event("i1", response("c1", "f", r#"{"r":2}"#));
    t.finish("i1", false);
    let spans = sink.spans();
    let first = &spans[0];
    assert_eq!(first.status.code, StatusCode::Error);
    assert_eq!(first.status.message.as_deref(), Some("boom"));
    assert!(matches!(
        first.attribute("adk.retry.count"),
        Some(AttributeValue::Int(1))
    ));
    assert_eq!(text(first, "adk.retry.outcome").unwrap(), "retry");
    assert!(first.attribute("gen_ai.tool.call.result").is_none());
    let second = &spans[1];
    assert_eq!(second.name, "execute_tool f");
    assert_eq!(second.status.code, StatusCode::Unset);
    assert_eq!(
        text(second, "gen_ai.tool.call.result").unwrap(),
        r#"{"r":2}"#
    );
}

#[test]
fn two_agents_given_the_same_call_id_keep_their_own_spans() {
    // Parallel branches whose models both name their call `c`: b's call
    // comes second (a synthetic key), answers first, and a's fails later.
    let (mut t, sink) = tracer();
    start(
        &mut t,
        "i1",
        vec![agent("a", None, false), agent("b", None, false)],
    );
    t.before_tool(
        "i1",
        Some("a"),
        "f",
        Some("c"),
        Some(r#"{"who":"a"}"#.into()),
    );
    t.before_tool(
        "i1",
        Some("b"),
        "f",
        Some("c"),
        Some(r#"{"who":"b"}"#.into()),
    );
    t.after_tool("i1", Some("b"), "f", Some("c"), 0, None);
    let mut answer = response("c", "f", r#"{"who":"b"}"#);
    answer.author = Some("b".into());
    t.on_event("i1", answer);
    t.tool_error("i1", Some("a"), "f", Some("c"), "Error", "bad a");
    t.after_tool("i1", Some("a"), "f", Some("c"), 0, None);
    t.on_event("i1", response("c", "f", r#"{"error":"bad a"}"#));
    t.finish("i1", false);
    let spans = sink.spans();
    let tools = named(&spans, "execute_tool f");
    assert_eq!(tools.len(), 2);
    for span in tools {
        let args = text(span, "gen_ai.tool.call.arguments").unwrap();
        if args.contains('a') {
            assert_eq!(span.status.message.as_deref(), Some("bad a"));
            assert!(span.attribute("gen_ai.tool.call.result").is_none());
        } else {
            assert_eq!(span.status.code, StatusCode::Unset);
            assert_eq!(
                text(span, "gen_ai.tool.call.result").unwrap(),
                r#"{"who":"b"}"#
            );
        }
    }
}

#[test]
fn sequential_siblings_close_and_unknown_agents_nest_under_tools() {
    let (mut t, sink) = tracer();
    start(
        &mut t,
        "i1",
        vec![
            agent("seq", None, true),
            agent("a", Some("seq"), false),
            agent("b", Some("seq"), false),
        ],
    );
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model("i1", Some("a"), ModelResponse::default());
    t.before_model("i1", Some("b"), ModelRequest::default());
    // b's activity ended a's span before b's model span opened.
    assert_eq!(sink.spans()[1].name, "invoke_agent a");
    t.before_tool("i1", Some("b"), "agent_tool", Some("c9"), None);
    t.before_model("i1", Some("inner"), ModelRequest::default());
    t.finish("i1", false);
    let spans = sink.spans();
    let tool = by_name(&spans, "execute_tool agent_tool");
    let inner = by_name(&spans, "invoke_agent inner");
    assert_eq!(inner.parent_span_id, Some(tool.span_id));
    let seq = by_name(&spans, "invoke_agent seq");
    let b = by_name(&spans, "invoke_agent b");
    assert_eq!(b.parent_span_id, Some(seq.span_id));
}

#[test]
fn a_completed_agent_node_ends_its_subtree_children_first_unless_busy() {
    // A Workflow's nodes (wf) with a node agent `a` that hands over to `a1`.
    let (mut t, sink) = tracer();
    start_named(
        &mut t,
        "i1",
        None,
        vec![
            agent("a", None, false),
            agent("a1", Some("a"), false),
            agent("b", None, false),
        ],
    );
    t.before_model("i1", Some("a1"), ModelRequest::default());
    t.after_model("i1", Some("a1"), ModelResponse::default());
    t.before_model("i1", Some("b"), ModelRequest::default());
    // A node still calling its model has not finished: nothing ends.
    t.agent_node_done("i1", "b");
    t.agent_node_done("i1", "a");
    let names: Vec<String> = sink.spans().iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["chat unknown", "invoke_agent a1", "invoke_agent a"]);
    // An unknown name, or an agent with no open span, changes nothing.
    t.agent_node_done("i1", "zz");
    t.agent_node_done("i1", "a");
    assert_eq!(sink.spans().len(), 3);
    t.after_model("i1", Some("b"), ModelResponse::default());
    t.agent_node_done("i1", "b");
    assert_eq!(sink.spans()[4].name, "invoke_agent b");
    // Its next run (a loop in the graph) opens a fresh span.
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.finish("i1", false);
    let spans = sink.spans();
    assert_eq!(named(&spans, "invoke_agent a").len(), 2);
    assert_eq!(t.open_count(), 0);
}

#[test]
fn an_unknown_agent_gets_a_span_under_each_call_that_ran_it_ending_within_it() {
    // Calls in turns of their own, or in one turn: ADK runs a turn's calls
    // one after another, then sends one event with both responses.
    for one_turn in [false, true] {
        let (mut t, sink) = tracer();
        start(&mut t, "i1", vec![agent("a", None, false)]);
        for call in ["c1", "c2"] {
            t.before_tool("i1", Some("a"), "delegate", Some(call), None);
            t.before_model("i1", Some("inner"), ModelRequest::default());
            t.after_model("i1", Some("inner"), ModelResponse::default());
            t.after_tool("i1", Some("a"), "delegate", Some(call), 0, None);
            if !one_turn {
                t.on_event("i1", response(call, "delegate", "{}"));
            }
        }
        if one_turn {
            let mut both = response("c1", "delegate", "{}");
            both.function_responses.push(FunctionResponse {
                id: "c2".into(),
                name: "delegate".into(),
                response_json: "{}".into(),
            });
            t.on_event("i1", both);
        }
        t.finish("i1", false);
        let spans = sink.spans();
        let tools = named(&spans, "execute_tool delegate");
        let inners = named(&spans, "invoke_agent inner");
        assert_eq!((tools.len(), inners.len()), (2, 2), "one turn: {one_turn}");
        for inner in &inners {
            let tool = tools
                .iter()
                .find(|t| Some(t.span_id) == inner.parent_span_id);
            let tool = tool.expect("under a call");
            assert!(inner.end_time_unix_nano <= tool.end_time_unix_nano);
            let chats = spans
                .iter()
                .filter(|s| s.parent_span_id == Some(inner.span_id))
                .count();
            assert_eq!(chats, 1);
        }
    }
}

/// An error event of `author` (`code`, `message`: what it carries).
fn error_event(author: &str, code: Option<&str>, message: Option<&str>) -> EventInfo {
    EventInfo {
        author: Some(author.into()),
        error_code: code.map(Into::into),
        error_message: message.map(Into::into),
        ..Default::default()
    }
}

/// An answer of `author`'s: its final one (`Some(true)`), one it goes on
/// after (`Some(false)`), or one without parts that says neither (`None`).
fn answer(author: &str, ends_run: Option<bool>) -> EventInfo {
    EventInfo {
        author: Some(author.into()),
        ends_run,
        ..Default::default()
    }
}

#[test]
fn an_agent_running_again_after_its_final_answer_gets_a_fresh_span_unless_busy() {
    let (mut t, sink) = tracer();
    let mut looping = agent("loop", None, true);
    looping.looping = true;
    start(&mut t, "i1", vec![looping, agent("a", Some("loop"), false)]);
    // Pass 1 ends with a's final answer; a usage-only close says nothing.
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model("i1", Some("a"), ModelResponse::default());
    t.on_event("i1", answer("a", Some(true)));
    t.on_event("i1", answer("a", None));
    // Pass 2: a new span for a, the loop's span kept.
    t.before_model("i1", Some("a"), ModelRequest::default());
    assert_eq!(named(&sink.spans(), "invoke_agent a").len(), 1);
    t.after_model("i1", Some("a"), ModelResponse::default());
    // A function call after the text (a streamed turn) means a goes on.
    t.on_event("i1", answer("a", Some(true)));
    t.on_event("i1", answer("a", Some(false)));
    t.before_tool("i1", Some("a"), "slow", Some("c1"), None);
    t.after_tool("i1", Some("a"), "slow", Some("c1"), 0, None);
    // Its final answer with a long-running call still open: a is busy, so
    // its next model call stays in the same span.
    t.on_event("i1", answer("a", Some(true)));
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model("i1", Some("a"), ModelResponse::default());
    t.finish("i1", false);
    let spans = sink.spans();
    let passes = named(&spans, "invoke_agent a");
    assert_eq!(passes.len(), 2);
    let loops: Vec<_> = named(&spans, "invoke_agent loop")
        .into_iter()
        .filter(|s| s.parent_span_id.is_some())
        .collect();
    assert_eq!(loops.len(), 1);
    for pass in &passes {
        assert_eq!(pass.parent_span_id, Some(loops[0].span_id));
    }
    let chats = named(&spans, "chat unknown");
    let in_second = chats
        .iter()
        .filter(|c| c.parent_span_id == Some(passes[1].span_id))
        .count();
    assert_eq!(in_second, 2);
}

#[test]
fn a_workflow_tool_node_call_ends_with_its_nodes_error_event() {
    // The node's tool callbacks have no agent; its error event's author is
    // the node (a retry plugin rethrew in onToolErrorCallback).
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![]);
    t.before_tool("i1", None, "boom", Some("c1"), None);
    // A model error of an agent running beside it is not the node's.
    t.before_model("i1", Some("writer"), ModelRequest::default());
    t.on_event("i1", error_event("writer", Some("SAFETY"), None));
    assert!(named(&sink.spans(), "execute_tool boom").is_empty());
    t.on_event(
        "i1",
        error_event(
            "boom_node",
            Some("Error"),
            Some("Error in tool 'boom': boom"),
        ),
    );
    let spans = sink.spans();
    let tool = by_name(&spans, "execute_tool boom");
    assert_eq!(tool.status.code, StatusCode::Error);
    assert_eq!(
        tool.status.message.as_deref(),
        Some("Error in tool 'boom': boom")
    );
    t.finish("i1", false);
    let spans = sink.spans();
    assert!(by_name(&spans, "execute_tool boom")
        .attribute(INTERRUPTED)
        .is_none());
}

#[test]
fn a_tool_node_named_after_its_tool_ends_with_its_error_event_whatever_the_message() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![]);
    t.before_tool("i1", None, "search", Some("c1"), None);
    t.on_event(
        "i1",
        error_event("search", Some("Error"), Some("quota exhausted")),
    );
    let spans = sink.spans();
    let tool = by_name(&spans, "execute_tool search");
    assert_eq!(tool.status.message.as_deref(), Some("quota exhausted"));
}

#[test]
fn cap_finishes_the_oldest_and_late_callbacks_are_ignored() {
    let (mut t, sink) = recording_tracer(2);
    for i in 0..3 {
        start(&mut t, &format!("i{i}"), vec![]);
    }
    assert_eq!(t.open_count(), 2);
    let spans = sink.spans();
    assert_eq!(spans.len(), 1);
    assert_eq!(
        text(&spans[0], "weave.google_adk.invocation_id").unwrap(),
        "i0"
    );
    assert!(matches!(
        spans[0].attribute(INTERRUPTED),
        Some(AttributeValue::Bool(true))
    ));
    t.after_tool("i0", None, "f", None, 0, None);
    assert_eq!(t.open_count(), 2);
    t.stop();
    assert_eq!(t.open_count(), 0);
    start(&mut t, "late", vec![]);
    assert_eq!(t.open_count(), 0);
}

#[test]
fn root_errors_take_fields_that_are_there_even_empty() {
    // tracing.md: error.type = errorCode ?? 'Error', message errorMessage ??
    // errorCode ?? 'ADK event error'.
    let cases = [
        (Some("UNKNOWN_ERROR"), Some(""), "UNKNOWN_ERROR", ""),
        (Some("SAFETY"), None, "SAFETY", "SAFETY"),
        (None, Some("boom"), "Error", "boom"),
        (Some(""), Some("boom"), "", "boom"),
        (None, Some(""), "Error", ""),
    ];
    for (code, message, want_type, want_message) in cases {
        let (mut t, sink) = tracer();
        start(&mut t, "i1", vec![agent("a", None, false)]);
        t.on_event("i1", error_event("a", code, message));
        t.finish("i1", false);
        let spans = sink.spans();
        let root = spans.last().expect("root");
        assert_eq!(root.status.code, StatusCode::Error, "{code:?} {message:?}");
        assert_eq!(text(root, "error.type").as_deref(), Some(want_type));
        assert_eq!(root.status.message.as_deref(), Some(want_message));
    }
}

#[test]
fn model_error_and_error_codes() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![]);
    t.before_model("i1", None, ModelRequest::default());
    t.model_error("i1", None, "TypeError", "bad");
    t.before_model("i1", None, ModelRequest::default());
    t.after_model(
        "i1",
        None,
        ModelResponse {
            error_code: Some("SAFETY".into()),
            ..Default::default()
        },
    );
    t.finish("i1", false);
    let spans = sink.spans();
    assert_eq!(spans[0].status.message.as_deref(), Some("bad"));
    assert_eq!(text(&spans[0], "error.type").unwrap(), "TypeError");
    assert_eq!(spans[1].status.message.as_deref(), Some("SAFETY"));
    // No agent name: model spans hang off the root, which is named plainly.
    assert_eq!(spans[2].name, "invoke_agent");
    assert_eq!(spans[0].parent_span_id, Some(spans[2].span_id));
}

#[test]
fn capture_off_writes_no_content() {
    let (mut t, sink) = tracer();
    t.start(RunStart {
        invocation_id: "i1".into(),
        user_content: Some("{}".into()),
        settings: RunSettings {
            capture: false,
            vertex: true,
            value_limit: Some(3),
            streams: false,
        },
        root_name: Some("rootagent".into()),
        ..Default::default()
    });
    t.before_tool("i1", None, "f", None, Some("{\"a\":1}".into()));
    t.finish("i1", false);
    let spans = sink.spans();
    assert!(spans
        .iter()
        .all(|s| s.attribute("gen_ai.input.messages").is_none()
            && s.attribute("gen_ai.tool.call.arguments").is_none()));
    // The limit (3) cuts "vertex_ai" too.
    assert_eq!(text(&spans[1], "gen_ai.provider.name").unwrap(), "ver");
    assert_eq!(text(&spans[1], "gen_ai.agent.name").unwrap(), "roo");
}

#[test]
fn a_response_ends_a_tool_span_whose_after_callback_never_came() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.on_event("i1", response("c1", "f", r#"{"r":1}"#));
    assert_eq!(sink.spans().len(), 1);
    assert!(sink.spans()[0].attribute(INTERRUPTED).is_none());
    t.finish("i1", false);
}

#[test]
fn an_event_of_a_parallel_agent_does_not_close_another_agents_model_span() {
    let (mut t, sink) = tracer();
    start(
        &mut t,
        "i1",
        vec![
            agent("par", None, false),
            agent("a", Some("par"), false),
            agent("b", Some("par"), false),
        ],
    );
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.before_model("i1", Some("b"), ModelRequest::default());
    t.after_model("i1", Some("b"), ModelResponse::default());
    t.on_event(
        "i1",
        EventInfo {
            author: Some("b".into()),
            ..Default::default()
        },
    );
    assert_eq!(sink.spans().len(), 1);
    t.on_event("i1", answer("a", None));
    assert_eq!(sink.spans().len(), 2);
    t.finish("i1", false);
}

#[test]
fn a_function_response_event_is_the_root_output_without_its_content_json() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c\"1"), None);
    let mut ev = response("c\"1", "f", r#"{"sum":3}"#);
    ev.responses_only = true;
    t.on_event("i1", ev);
    t.finish("i1", true);
    let spans = sink.spans();
    let root = spans.last().unwrap();
    assert_eq!(
        text(root, "gen_ai.output.messages").unwrap(),
        r#"[{"role":"user","parts":[{"type":"tool_call_response","id":"c\"1","response":{"sum":3}}],"finish_reason":""}]"#
    );
    assert_eq!(
        text(&spans[0], "gen_ai.tool.call.result").unwrap(),
        r#"{"sum":3}"#
    );
}

#[test]
fn a_tool_whose_callbacks_threw_ends_with_its_agents_error_event() {
    // ReflectAndRetryToolPlugin registered first and rethrowing past its
    // limit: no callback of ours ran and no function response will come.
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.before_tool("i1", Some("a"), "g", Some("c2"), None);
    t.after_tool("i1", Some("a"), "g", Some("c2"), 0, None); // completed, response lost
    t.on_event(
        "i1",
        error_event("b", Some("UNKNOWN_ERROR"), Some("other agent")),
    ); // not a's
    assert!(sink.spans().is_empty());
    t.on_event(
        "i1",
        error_event(
            "a",
            Some("UNKNOWN_ERROR"),
            Some("Error in plugin 'p' during 'onToolErrorCallback' callback: boom"),
        ),
    );
    let spans = sink.spans();
    assert_eq!(spans.len(), 1);
    let f = by_name(&spans, "execute_tool f");
    assert_eq!(f.status.code, StatusCode::Error);
    // The error the plugin threw (a string here), not ADK's wrapping of it.
    assert_eq!(f.status.message.as_deref(), Some("boom"));
    assert_eq!(text(f, "error.type").unwrap(), "Error");
    assert!(f.attribute(INTERRUPTED).is_none());
    t.finish("i1", false);
    let spans = sink.spans();
    let g = by_name(&spans, "execute_tool g");
    assert_eq!(g.status.code, StatusCode::Unset);
    assert!(g.attribute(INTERRUPTED).is_none());
}

#[test]
fn a_later_plugins_after_tool_error_ends_the_call_this_plugin_completed_last() {
    // ReflectAndRetryToolPlugin registered after this one, rethrowing an
    // error found in a result past its limit: our afterToolCallback had run.
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.after_tool("i1", Some("a"), "f", Some("c1"), 0, None);
    t.before_tool("i1", Some("a"), "g", Some("c2"), None);
    t.after_tool("i1", Some("a"), "g", Some("c2"), 0, None);
    let wrapped = "Error in plugin 'p' during 'afterToolCallback' callback: Error: limit";
    t.on_event("i1", error_event("a", Some("UNKNOWN_ERROR"), Some(wrapped)));
    let spans = sink.spans();
    assert_eq!(spans.len(), 1);
    let g = by_name(&spans, "execute_tool g");
    assert_eq!(g.status.code, StatusCode::Error);
    assert_eq!(g.status.message.as_deref(), Some("limit"));
    assert_eq!(text(g, "error.type").unwrap(), "Error");
    t.finish("i1", false);
    let spans = sink.spans();
    let f = by_name(&spans, "execute_tool f");
    assert_eq!(f.status.code, StatusCode::Unset);
    assert!(f.attribute(INTERRUPTED).is_none());
}

#[test]
fn a_tool_error_callback_completes_a_span_whose_response_never_comes() {
    // Our onToolErrorCallback ran, then a later plugin threw: the span keeps
    // the tool's error and its time, and is not flagged interrupted.
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.tool_error("i1", Some("a"), "f", Some("c1"), "Error", "boom");
    t.finish("i1", false);
    let spans = sink.spans();
    let f = by_name(&spans, "execute_tool f");
    assert_eq!(f.status.message.as_deref(), Some("boom"));
    assert!(f.attribute(INTERRUPTED).is_none());
}

#[test]
fn each_chat_span_carries_its_own_calls_config() {
    let (mut t, sink) = tracer();
    start(&mut t, "i1", vec![agent("a", None, false)]);
    let configs = [
        Some(r#"{"temperature":0.5,"stopSequences":["x"]}"#),
        Some(r#"{"temperature":0.5,"stopSequences":["x"]}"#),
        Some(r#"{"topP":0.9,"maxOutputTokens":7}"#),
        None,
        Some("not json"),
        Some(r#"{"temperature":0.5,"stopSequences":["x"]}"#),
    ];
    for config in configs {
        t.before_model(
            "i1",
            Some("a"),
            ModelRequest {
                model: Some("gem".into()),
                config_json: config.map(Into::into),
                ..Default::default()
            },
        );
        t.after_model("i1", Some("a"), ModelResponse::default());
    }
    t.finish("i1", false);
    let spans = sink.spans();
    let chats: Vec<&SpanData> = spans.iter().filter(|s| s.name == "chat gem").collect();
    assert_eq!(chats.len(), configs.len());
    let summary = |s: &SpanData| {
        let mut out: Vec<String> = s
            .attributes
            .iter()
            .filter(|(k, _)| k.starts_with("gen_ai.request.") && *k != "gen_ai.request.model")
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect();
        out.sort();
        out.join(" ")
    };
    let first =
        "gen_ai.request.stop_sequences=StringArray([\"x\"]) gen_ai.request.temperature=Double(0.5)";
    let want = [
        first,
        first,
        "gen_ai.request.max_tokens=Int(7) gen_ai.request.top_p=Double(0.9)",
        "",
        "",
        first,
    ];
    for (chat, want) in chats.iter().zip(want) {
        assert_eq!(summary(chat), want);
    }
}

#[test]
fn the_value_limit_cuts_every_string_value_as_its_span_ends() {
    let (mut t, sink) = tracer();
    t.start(RunStart {
        invocation_id: "i1".into(),
        settings: RunSettings {
            capture: true,
            vertex: false,
            value_limit: Some(3),
            streams: false,
        },
        root_name: Some("héllo".into()),
        agents: vec![agent("héllo", None, false)],
        ..Default::default()
    });
    t.before_model(
        "i1",
        Some("héllo"),
        ModelRequest {
            model: Some("gemini".into()),
            config_json: Some(r#"{"stopSequences":["STOP!","ab"]}"#.into()),
            ..Default::default()
        },
    );
    t.before_tool(
        "i1",
        Some("héllo"),
        "lookup",
        Some("call-1"),
        Some("{\"a\":1}".into()),
    );
    t.finish("i1", false);
    let spans = sink.spans();
    let chat = by_name(&spans, "chat gemini");
    // Set by the model's rules (constants, config arrays) as well as from
    // the run: all are cut, in characters.
    assert_eq!(text(chat, "gen_ai.operation.name").unwrap(), "cha");
    assert_eq!(text(chat, "gen_ai.agent.name").unwrap(), "hél");
    match chat.attribute("gen_ai.request.stop_sequences") {
        Some(AttributeValue::StringArray(items)) => assert_eq!(items, &["STO", "ab"]),
        other => panic!("{other:?}"),
    }
    let tool = by_name(&spans, "execute_tool lookup");
    assert_eq!(text(tool, "gen_ai.tool.call.arguments").unwrap(), "{\"a");
    for span in &spans {
        for (key, value) in &span.attributes {
            if let AttributeValue::String(s) = value {
                assert!(s.chars().count() <= 3, "{}: {key} = {s:?}", span.name);
            }
        }
    }
}
