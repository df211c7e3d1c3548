//! AgentTool runs (model/links.rs): one trace, the inner root under the
//! call's tool span, the caller's end ending what the inner run left open.

use super::inputs::AgentInfo;
use super::model::*;
use super::open_span::INTERRUPTED;
use super::span::{AttributeValue, SpanData};
use super::test_support::*;
use std::sync::Arc;

fn tracer() -> (Tracer, Arc<Recorder>) {
    recording_tracer(10)
}

fn start(t: &mut Tracer, id: &str, root: &str) {
    t.start(RunStart {
        invocation_id: id.into(),
        session_id: Some("s1".into()),
        root_name: Some(root.into()),
        agents: vec![AgentInfo {
            name: root.into(),
            ..Default::default()
        }],
        ..Default::default()
    });
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "spans named {name}");
    found[0]
}

fn interrupted(s: &SpanData) -> bool {
    matches!(s.attribute(INTERRUPTED), Some(AttributeValue::Bool(true)))
}

fn tool_response(id: &str, name: &str) -> EventInfo {
    EventInfo {
        author: Some("outer".into()),
        function_responses: vec![FunctionResponse {
            id: id.into(),
            name: name.into(),
            response_json: r#"{"result":"ok"}"#.into(),
        }],
        ..Default::default()
    }
}

/// outer calls the AgentTool `helper` (call c1); the inner run calls `f`.
fn outer_calls_helper(t: &mut Tracer) {
    start(t, "outer-inv", "outer");
    t.before_model("outer-inv", Some("outer"), ModelRequest::default());
    t.after_model("outer-inv", Some("outer"), ModelResponse::default());
    t.before_tool("outer-inv", Some("outer"), "helper", Some("c1"), None);
    start(t, "inner-inv", "helper");
    t.link("inner-inv", "outer-inv", Some("c1"), Some("helper"));
    let inner_model = ModelRequest {
        model: Some("inner-model".into()),
        ..Default::default()
    };
    t.before_model("inner-inv", Some("helper"), inner_model);
    t.after_model("inner-inv", Some("helper"), ModelResponse::default());
    t.before_tool("inner-inv", Some("helper"), "f", Some("c2"), None);
}

#[test]
fn an_agent_tool_run_is_a_subtree_of_its_calls_tool_span() {
    let (mut t, sink) = tracer();
    outer_calls_helper(&mut t);
    t.after_tool("inner-inv", Some("helper"), "f", Some("c2"), 0, None);
    t.on_event("inner-inv", tool_response("c2", "f"));
    t.finish("inner-inv", false);
    assert_eq!(t.open_count(), 1);
    t.after_tool("outer-inv", Some("outer"), "helper", Some("c1"), 0, None);
    t.on_event("outer-inv", tool_response("c1", "helper"));
    t.finish("outer-inv", false);
    assert_eq!(t.open_count(), 0);

    let spans = sink.spans();
    let roots: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 1, "one root");
    assert!(
        spans.iter().all(|s| s.trace_id == roots[0].trace_id),
        "one trace"
    );
    let call = one(&spans, "execute_tool helper");
    let helpers = named(&spans, "invoke_agent helper");
    assert_eq!(helpers.len(), 2, "inner root and its agent span");
    let inner_root = helpers
        .iter()
        .find(|s| s.parent_span_id == Some(call.span_id))
        .expect("the inner root hangs under the call's tool span");
    assert!(!interrupted(inner_root));
    let inner_agent = helpers
        .iter()
        .find(|s| s.parent_span_id == Some(inner_root.span_id))
        .expect("the inner agent span under the inner root");
    assert_eq!(
        one(&spans, "chat inner-model").parent_span_id,
        Some(inner_agent.span_id)
    );
    assert_eq!(
        one(&spans, "execute_tool f").parent_span_id,
        Some(inner_agent.span_id)
    );
    // The inner root ends before the call that waited for it.
    let pos = |id: [u8; 8]| spans.iter().position(|s| s.span_id == id);
    assert!(pos(inner_root.span_id) < pos(call.span_id));
}

#[test]
fn ending_the_caller_ends_what_the_inner_run_left_open() {
    for interrupted_outer in [false, true] {
        let (mut t, sink) = tracer();
        outer_calls_helper(&mut t);
        t.finish("outer-inv", interrupted_outer);
        assert_eq!(t.open_count(), 0);
        let spans = sink.spans();
        let call = one(&spans, "execute_tool helper");
        let inner_root = named(&spans, "invoke_agent helper")
            .into_iter()
            .find(|s| s.parent_span_id == Some(call.span_id))
            .expect("inner root");
        assert!(interrupted(inner_root), "the inner root is interrupted");
        assert!(interrupted(one(&spans, "execute_tool f")));
        let outer_root = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
        assert_eq!(interrupted(outer_root), interrupted_outer);
        // Children first: the inner spans end before the call's tool span.
        let pos = |id: [u8; 8]| spans.iter().position(|s| s.span_id == id);
        assert!(pos(inner_root.span_id) < pos(call.span_id));
        // The inner run's later callbacks change nothing.
        t.before_model("inner-inv", Some("helper"), ModelRequest::default());
        t.finish("inner-inv", false);
        assert_eq!(t.open_count(), 0);
        assert_eq!(sink.spans().len(), spans.len());
    }
}

#[test]
fn nested_agent_tools_nest_and_end_together() {
    let (mut t, sink) = tracer();
    outer_calls_helper(&mut t);
    // The inner run's `f` is itself an AgentTool.
    start(&mut t, "deep-inv", "deep");
    t.link("deep-inv", "inner-inv", Some("c2"), Some("f"));
    t.before_model("deep-inv", Some("deep"), ModelRequest::default());
    assert_eq!(t.linked_runs("outer-inv"), ["inner-inv", "deep-inv"]);
    assert_eq!(t.linked_runs("inner-inv"), ["deep-inv"]);
    assert!(t.linked_runs("deep-inv").is_empty());
    t.finish("outer-inv", true);
    assert!(t.linked_runs("outer-inv").is_empty());
    assert_eq!(t.open_count(), 0);
    let spans = sink.spans();
    let trace = spans[0].trace_id;
    assert!(spans.iter().all(|s| s.trace_id == trace));
    let f = one(&spans, "execute_tool f");
    let deep_root = named(&spans, "invoke_agent deep")
        .into_iter()
        .find(|s| s.parent_span_id == Some(f.span_id))
        .expect("the nested run hangs under the inner run's tool span");
    assert!(interrupted(deep_root));
    assert_eq!(
        spans.iter().filter(|s| s.parent_span_id.is_none()).count(),
        1
    );
}

#[test]
fn a_call_id_that_is_missing_falls_back_to_the_tool_name() {
    let (mut t, sink) = tracer();
    start(&mut t, "o", "outer");
    t.before_tool("o", Some("outer"), "other", Some("x"), None);
    t.before_tool("o", Some("outer"), "helper", None, None);
    t.before_tool("o", Some("outer"), "third", Some("y"), None);
    start(&mut t, "i", "helper");
    t.link("i", "o", Some("unknown-id"), Some("helper"));
    t.finish("o", true);
    let spans = sink.spans();
    let call = one(&spans, "execute_tool helper");
    let inner = named(&spans, "invoke_agent helper");
    assert_eq!(inner.len(), 1);
    assert_eq!(inner[0].parent_span_id, Some(call.span_id));
}

#[test]
fn a_run_whose_caller_already_ended_is_dropped() {
    let (mut t, sink) = tracer();
    start(&mut t, "o", "outer");
    t.finish("o", true);
    start(&mut t, "i", "helper");
    t.link("i", "o", Some("c1"), Some("helper"));
    assert_eq!(t.open_count(), 0);
    t.before_model("i", Some("helper"), ModelRequest::default());
    t.finish("i", false);
    assert_eq!(t.open_count(), 0);
    let spans = sink.spans();
    assert_eq!(spans.len(), 1, "the caller's root only");
}

#[test]
fn links_that_would_make_a_cycle_or_relink_are_ignored() {
    let (mut t, sink) = tracer();
    start(&mut t, "a", "a");
    start(&mut t, "b", "b");
    t.link("b", "a", None, None);
    t.link("a", "b", None, None); // a is b's caller: no cycle
    t.link("a", "a", None, None);
    start(&mut t, "c", "c");
    t.link("b", "c", None, None); // already linked: stays under a
    t.link("x", "a", None, None); // unknown invocation: nothing
    t.finish("a", false);
    assert_eq!(t.open_count(), 1, "c is not a's");
    t.finish("c", false);
    let spans = sink.spans();
    let a = one(&spans, "invoke_agent a");
    let b = one(&spans, "invoke_agent b");
    let c = one(&spans, "invoke_agent c");
    assert_eq!(a.parent_span_id, None);
    assert_eq!(
        b.parent_span_id,
        Some(a.span_id),
        "no tool span: the caller's root"
    );
    assert_eq!(b.trace_id, a.trace_id);
    assert_eq!(c.parent_span_id, None);
    assert_ne!(c.trace_id, a.trace_id);
}

#[test]
fn a_run_with_spans_of_its_own_is_not_relinked() {
    let (mut t, sink) = tracer();
    start(&mut t, "a", "a");
    start(&mut t, "b", "b");
    t.before_model("b", Some("b"), ModelRequest::default());
    t.link("b", "a", None, None);
    t.finish("a", false);
    t.finish("b", false);
    let spans = sink.spans();
    let roots = spans.iter().filter(|s| s.parent_span_id.is_none()).count();
    assert_eq!(roots, 2);
}
