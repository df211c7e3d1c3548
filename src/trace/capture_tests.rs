//! Span model rules of tracing.md "Added": streamed model calls and tool
//! results without a function response event.

use super::inputs::AgentInfo;
use super::model::*;
use super::open_span::INTERRUPTED;
use super::span::{now_nanos, AttributeValue, SpanData, StatusCode};
use super::test_support::*;
use std::sync::Arc;

fn started(agents: &[(&str, Option<&str>, bool)], capture: bool) -> (Tracer, Arc<Recorder>) {
    started_with(agents, capture, false)
}

/// `agent` calls its model, which answers with a text part and no finish
/// reason: a streamed call that may answer again.
fn streamed_text(t: &mut Tracer, agent: &str, text: &str) {
    t.before_model("i1", Some(agent), ModelRequest::default());
    let content = format!(r#"{{"parts":[{{"text":"{text}"}}]}}"#);
    t.after_model(
        "i1",
        Some(agent),
        streamed_response(None, [None; 5], Some(&content)),
    );
}

/// A run that streams (SSE): its model calls may answer more than once.
fn started_streaming(agents: &[(&str, Option<&str>, bool)]) -> (Tracer, Arc<Recorder>) {
    started_with(agents, true, true)
}

fn started_with(
    agents: &[(&str, Option<&str>, bool)],
    capture: bool,
    streams: bool,
) -> (Tracer, Arc<Recorder>) {
    let (mut t, sink) = recording_tracer(10);
    let agents: Vec<AgentInfo> = agents
        .iter()
        .map(|(name, parent, sequential)| AgentInfo {
            name: (*name).into(),
            parent: parent.map(Into::into),
            sequential: *sequential,
            ..Default::default()
        })
        .collect();
    t.start(RunStart {
        invocation_id: "i1".into(),
        root_name: agents.first().map(|a| a.name.clone()),
        agents,
        settings: RunSettings {
            capture,
            streams,
            ..Default::default()
        },
        ..Default::default()
    });
    (t, sink)
}

fn event(author: &str, responses: &[(&str, &str, &str)]) -> EventInfo {
    EventInfo {
        author: Some(author.into()),
        function_responses: responses
            .iter()
            .map(|(id, name, json)| FunctionResponse {
                id: (*id).into(),
                name: (*name).into(),
                response_json: (*json).into(),
            })
            .collect(),
        ..Default::default()
    }
}

fn int(s: &SpanData, key: &str) -> Option<i64> {
    match s.attribute(key) {
        Some(AttributeValue::Int(i)) => Some(*i),
        _ => None,
    }
}

fn pause() {
    std::thread::sleep(std::time::Duration::from_millis(2));
}

#[test]
fn a_split_streamed_turn_is_one_chat_span_ending_at_its_last_response() {
    let (mut t, sink) = started_streaming(&[("a", None, false)]);
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model(
        "i1",
        Some("a"),
        streamed_response(
            None,
            [Some(10), Some(8), Some(18), None, Some(4)],
            Some(r#"{"role":"model","parts":[{"text":"Let me check."}]}"#),
        ),
    );
    // Its own event does not close a streamed call.
    t.on_event("i1", event("a", &[]));
    t.after_model(
        "i1",
        Some("a"),
        streamed_response(
            None,
            [Some(10), Some(8), Some(18), None, Some(4)],
            Some(r#"{"role":"model","parts":[{"functionCall":{"name":"f","args":{},"id":"c1"}}]}"#),
        ),
    );
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    t.after_tool("i1", Some("a"), "f", Some("c1"), 0, None);
    t.on_event("i1", event("a", &[("c1", "f", r#"{"ok":1}"#)]));
    pause();
    t.after_model(
        "i1",
        Some("a"),
        streamed_response(
            Some("STOP"),
            [Some(10), Some(9), Some(19), None, None],
            None,
        ),
    );
    pause();
    assert!(
        named(&sink.spans(), "chat unknown").is_empty(),
        "still open"
    );
    t.before_model("i1", Some("a"), ModelRequest::default());
    let spans = sink.spans();
    let chat = named(&spans, "chat unknown")[0];
    let tool = named(&spans, "execute_tool f")[0];
    let out: serde_json::Value =
        serde_json::from_str(&text(chat, "gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(
        out,
        serde_json::json!([{"role":"assistant","parts":[
            {"type":"text","content":"Let me check."},
            {"type":"tool_call","id":"c1","name":"f","arguments":{}}
        ],"finish_reason":"stop"}])
    );
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), Some(9));
    assert_eq!(int(chat, "gen_ai.usage.cache_read.input_tokens"), None);
    assert!(chat.end_time_unix_nano > tool.end_time_unix_nano);
    // Closed by the next call, ended at the usage-only response before it.
    let next_start = now_nanos();
    assert!(chat.end_time_unix_nano + 1_000_000 < next_start);
    assert!(chat.attribute(INTERRUPTED).is_none());
    t.finish("i1", false);
    assert_eq!(named(&sink.spans(), "chat unknown").len(), 2);
}

#[test]
fn streamed_calls_end_with_a_model_error_the_agent_or_the_run() {
    let (mut t, sink) = started_streaming(&[("a", None, false), ("b", Some("a"), false)]);
    streamed_text(&mut t, "b", "x");
    t.model_error("i1", Some("b"), "Error", "stream broke");
    t.before_model("i1", Some("b"), ModelRequest::default());
    t.after_model(
        "i1",
        Some("b"),
        streamed_response(Some("STOP"), [None; 5], None),
    );
    t.after_agent("i1", Some("b"));
    streamed_text(&mut t, "a", "y");
    t.finish("i1", true);
    let spans = sink.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "chat unknown",
            "chat unknown",
            "invoke_agent b",
            "chat unknown",
            "invoke_agent a",
            "invoke_agent a"
        ]
    );
    assert_eq!(spans[0].status.code, StatusCode::Error);
    assert_eq!(spans[0].status.message.as_deref(), Some("stream broke"));
    assert!(text(&spans[0], "gen_ai.output.messages")
        .unwrap()
        .contains("\"x\""));
    // The agent's end closed its finished call: not interrupted.
    assert!(spans[1].attribute(INTERRUPTED).is_none());
    // The run was cut off before the model said it was done.
    assert!(matches!(
        spans[3].attribute(INTERRUPTED),
        Some(AttributeValue::Bool(true))
    ));
    assert_eq!(t.open_count(), 0);
}

#[test]
fn a_completed_agent_node_ends_its_streamed_call_first() {
    let (mut t, sink) = started_streaming(&[("a", None, false), ("b", Some("a"), false)]);
    streamed_text(&mut t, "b", "x");
    // b's node completed (a Workflow's afterNodeCallback): its call is over.
    t.agent_node_done("i1", "b");
    let spans = sink.spans();
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chat unknown", "invoke_agent b"]);
    assert!(spans[0].attribute(INTERRUPTED).is_none());
    assert!(text(&spans[0], "gen_ai.output.messages")
        .unwrap()
        .contains("\"x\""));
}

#[test]
fn a_streamed_call_the_model_finished_is_complete_in_an_interrupted_run() {
    let (mut t, sink) = started_streaming(&[("a", None, false)]);
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model(
        "i1",
        Some("a"),
        streamed_response(
            Some("STOP"),
            [None; 5],
            Some(r#"{"parts":[{"text":"done"}]}"#),
        ),
    );
    let answered = now_nanos();
    pause();
    t.finish("i1", true);
    let spans = sink.spans();
    let chat = named(&spans, "chat unknown")[0];
    assert!(chat.attribute(INTERRUPTED).is_none());
    assert!(chat.end_time_unix_nano <= answered);
}

#[test]
fn non_streamed_responses_still_end_their_span_each() {
    let (mut t, sink) = started(&[("a", None, false)], true);
    t.before_model("i1", Some("a"), ModelRequest::default());
    t.after_model(
        "i1",
        Some("a"),
        ModelResponse {
            content_json: Some(r#"{"parts":[{"text":"one"}]}"#.into()),
            ..Default::default()
        },
    );
    // A second response of the same call has no span left to go to.
    t.after_model(
        "i1",
        Some("a"),
        ModelResponse {
            content_json: Some(r#"{"parts":[{"text":"two"}]}"#.into()),
            ..Default::default()
        },
    );
    let spans = sink.spans();
    assert_eq!(named(&spans, "chat unknown").len(), 1);
    assert!(text(&spans[0], "gen_ai.output.messages")
        .unwrap()
        .contains("one"));
}

#[test]
fn without_a_response_event_the_result_after_tool_saw_is_the_outcome() {
    let (mut t, sink) = started(&[("a", None, false)], true);
    // c1: no event came. c2: the event wins. c3: errored, no result.
    for id in ["c1", "c2", "c3"] {
        t.before_tool("i1", Some("a"), "f", Some(id), None);
    }
    after_tool_seeing(&mut t, "i1", Some("a"), "f", Some("c1"), r#"{"seen":1}"#);
    after_tool_seeing(&mut t, "i1", Some("a"), "f", Some("c2"), r#"{"seen":2}"#);
    t.tool_error("i1", Some("a"), "f", Some("c3"), "ValueError", "nope");
    after_tool_seeing(&mut t, "i1", Some("a"), "f", Some("c3"), r#"{"seen":3}"#);
    t.on_event("i1", event("a", &[("c2", "f", r#"{"rewritten":2}"#)]));
    t.finish("i1", true);
    let spans = sink.spans();
    let tools = named(&spans, "execute_tool f");
    let by_id = |id: &str| {
        *tools
            .iter()
            .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some(id))
            .unwrap()
    };
    assert_eq!(
        text(by_id("c1"), "gen_ai.tool.call.result").unwrap(),
        r#"{"seen":1}"#
    );
    assert!(by_id("c1").attribute(INTERRUPTED).is_none());
    assert_eq!(
        text(by_id("c2"), "gen_ai.tool.call.result").unwrap(),
        r#"{"rewritten":2}"#
    );
    assert_eq!(text(by_id("c3"), "gen_ai.tool.call.result"), None);
    assert_eq!(by_id("c3").status.code, StatusCode::Error);
}

#[test]
fn a_retry_response_seen_by_after_tool_makes_the_span_error() {
    for capture in [true, false] {
        let (mut t, sink) = started(&[("a", None, false)], capture);
        t.before_tool("i1", Some("a"), "f", Some("c1"), None);
        let retry = r#"{"response_type":"ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN","error_type":"ValueError","error_details":"nope","retry_count":1,"reflection_guidance":"The call to tool `f` failed."}"#;
        after_tool_seeing(&mut t, "i1", Some("a"), "f", Some("c1"), retry);
        t.finish("i1", false);
        let spans = sink.spans();
        let tool = named(&spans, "execute_tool f")[0];
        assert_eq!(tool.status.code, StatusCode::Error);
        assert_eq!(text(tool, "error.type").unwrap(), "ValueError");
        assert_eq!(int(tool, "adk.retry.count"), Some(1));
        assert_eq!(text(tool, "adk.retry.outcome").unwrap(), "retry");
        assert_eq!(text(tool, "gen_ai.tool.call.result"), None);
    }
}

#[test]
fn a_retry_response_with_a_lone_surrogate_is_still_read() {
    // JSON.stringify writes an unpaired surrogate of the tool's error
    // message as \udc00, which serde_json alone refuses.
    let (mut t, sink) = started(&[("a", None, false)], true);
    t.before_tool("i1", Some("a"), "f", Some("c1"), None);
    let retry = r#"{"response_type":"ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN","error_type":"ValueError","error_details":"no\udc00pe","retry_count":2,"reflection_guidance":"The call to tool `f` failed."}"#;
    after_tool_seeing(&mut t, "i1", Some("a"), "f", Some("c1"), retry);
    t.finish("i1", false);
    let spans = sink.spans();
    let tool = named(&spans, "execute_tool f")[0];
    assert_eq!(tool.status.code, StatusCode::Error);
    assert_eq!(tool.status.message.as_deref(), Some("no\u{FFFD}pe"));
    assert_eq!(int(tool, "adk.retry.count"), Some(2));
}

#[test]
fn held_results_fill_only_spans_no_event_ended() {
    let (mut t, sink) = started(&[("a", None, false)], true);
    for id in ["c1", "c2", "c3"] {
        t.before_tool("i1", Some("a"), "f", Some(id), None);
    }
    t.after_tool("i1", Some("a"), "f", Some("c1"), 7, None);
    t.after_tool("i1", Some("a"), "f", Some("c2"), 8, None);
    // c3: afterToolCallback had nothing to hold.
    t.after_tool("i1", Some("a"), "f", Some("c3"), 0, None);
    t.on_event("i1", event("a", &[("c2", "f", r#"{"event":2}"#)]));
    t.supply_seen("i1", 7, r#"{"seen":1}"#.into());
    // The event ended c2's span: a held result for it comes too late.
    t.supply_seen("i1", 8, r#"{"seen":2}"#.into());
    t.supply_seen("i1", 0, "ignored".into());
    t.supply_seen("nope", 7, "ignored".into());
    t.finish("i1", false);
    let spans = sink.spans();
    let result = |id: &str| {
        let s = spans
            .iter()
            .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some(id))
            .unwrap();
        text(s, "gen_ai.tool.call.result")
    };
    assert_eq!(result("c1").as_deref(), Some(r#"{"seen":1}"#));
    assert_eq!(result("c2").as_deref(), Some(r#"{"event":2}"#));
    assert_eq!(result("c3"), None);
}
