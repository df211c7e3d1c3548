//! Runs that join a parent span from outside (joinActiveTrace), trace ids
//! of invocations, and keys that differ only in lone surrogates.

use super::ids::hex;
use super::key_text::from_utf16;
use super::model::*;
use super::test_support::*;
use std::sync::Arc;

fn tracer() -> (Tracer, Arc<Recorder>) {
    recording_tracer(100)
}

fn start(t: &mut Tracer, id: &str, parent: Option<RemoteParent>) {
    t.start(RunStart {
        invocation_id: id.into(),
        root_name: Some("root".into()),
        remote_parent: parent,
        ..RunStart::default()
    });
}

/// One model call of agent `root`, then the end of the run.
fn run(t: &mut Tracer, id: &str) {
    t.before_model(id, Some("root"), ModelRequest::default());
    t.after_model(id, Some("root"), ModelResponse::default());
    t.finish(id, false);
}

const PARENT: RemoteParent = RemoteParent {
    trace_id: [7; 16],
    span_id: [9; 8],
    sampled: true,
    is_remote: false,
    trace_state: None,
};

#[test]
fn a_run_with_a_remote_parent_is_its_child_in_its_trace() {
    let (mut t, sink) = tracer();
    start(&mut t, "inv", Some(PARENT.clone()));
    run(&mut t, "inv");
    let spans = sink.spans();
    assert_eq!(spans.len(), 3, "root, agent, chat");
    assert!(spans.iter().all(|s| s.trace_id == PARENT.trace_id));
    let root = spans.last().expect("root");
    assert_eq!(root.name, "invoke_agent root");
    assert_eq!(root.parent_span_id, Some(PARENT.span_id));
    assert!(root.remote_parent);
    assert!(spans[..2].iter().all(|s| !s.remote_parent));
    assert_eq!(t.trace_id_of("inv"), Some(PARENT.trace_id));
}

#[test]
fn a_run_without_one_is_a_new_trace() {
    let (mut t, sink) = tracer();
    start(&mut t, "a", None);
    start(&mut t, "b", None);
    run(&mut t, "a");
    run(&mut t, "b");
    let spans = sink.spans();
    assert_ne!(spans[0].trace_id, spans[5].trace_id);
    assert!(spans.iter().all(|s| s.trace_id != PARENT.trace_id));
    assert_eq!(spans[2].parent_span_id, None);
}

#[test]
fn the_second_start_of_a_run_joins_when_the_first_did_not() {
    let (mut t, sink) = tracer();
    start(&mut t, "inv", None);
    let first = t.trace_id_of("inv");
    start(&mut t, "inv", Some(PARENT.clone()));
    assert_ne!(first, Some(PARENT.trace_id));
    // A different parent later changes nothing: the first one won.
    let other = RemoteParent {
        trace_id: [1; 16],
        ..PARENT.clone()
    };
    start(&mut t, "inv", Some(other));
    run(&mut t, "inv");
    assert!(sink.spans().iter().all(|s| s.trace_id == PARENT.trace_id));
}

#[test]
fn an_unsampled_parent_keeps_the_runs_spans_from_the_sink() {
    let (mut t, sink) = tracer();
    let unsampled = RemoteParent {
        sampled: false,
        ..PARENT.clone()
    };
    start(&mut t, "quiet", Some(unsampled));
    start(&mut t, "loud", None);
    run(&mut t, "quiet");
    assert_eq!(t.trace_id_of("quiet"), Some(PARENT.trace_id));
    run(&mut t, "loud");
    let spans = sink.spans();
    assert_eq!(spans.len(), 3, "only the sampled run's spans");
    assert!(spans.iter().all(|s| s.trace_id != PARENT.trace_id));
    // Once the unsampled run ended, a sampled run of that trace exports.
    start(&mut t, "later", Some(PARENT.clone()));
    run(&mut t, "later");
    assert_eq!(sink.spans().len(), 6);
}

#[test]
fn trace_ids_of_finished_runs_are_kept_for_the_last_ten_thousand() {
    let (mut t, _sink) = tracer();
    start(&mut t, "first", None);
    let first = t.trace_id_of("first").expect("open");
    assert_eq!(hex(&first).len(), 32);
    t.finish("first", false);
    assert_eq!(t.trace_id_of("first"), Some(first));
    for i in 0..9_999 {
        let id = format!("inv-{i}");
        start(&mut t, &id, None);
        t.finish(&id, true);
    }
    assert_eq!(t.trace_id_of("first"), Some(first));
    start(&mut t, "one-more", None);
    t.finish("one-more", false);
    assert_eq!(t.trace_id_of("first"), None);
    assert!(t.trace_id_of("one-more").is_some());
    assert_eq!(t.trace_id_of("never"), None);
}

#[test]
fn ids_that_differ_only_in_a_lone_surrogate_are_two_runs() {
    let (mut t, sink) = tracer();
    let a = from_utf16(&[0xD800]);
    let b = from_utf16(&[0xDBFF]);
    start(&mut t, &a, None);
    start(&mut t, &b, None);
    assert_eq!(t.open_count(), 2);
    assert_ne!(t.trace_id_of(&a), t.trace_id_of(&b));
    t.finish(&a, false);
    t.finish(&b, false);
    let roots: Vec<_> = sink
        .spans()
        .into_iter()
        .filter(|s| s.parent_span_id.is_none())
        .collect();
    assert_eq!(roots.len(), 2);
    for root in roots {
        let shown = root
            .attribute("weave.google_adk.invocation_id")
            .and_then(|v| v.as_string())
            .map(|c| c.into_owned());
        assert_eq!(shown.as_deref(), Some("\u{FFFD}"));
    }
}

#[test]
fn a_propagated_parent_is_flagged_and_its_tracestate_carried_by_every_span() {
    let (mut t, sink) = tracer();
    let propagated = RemoteParent {
        is_remote: true,
        trace_state: Some("vendor=abc,other=1".into()),
        ..PARENT
    };
    start(&mut t, "inv", Some(propagated));
    start(&mut t, "plain", None);
    run(&mut t, "inv");
    run(&mut t, "plain");
    let spans = sink.spans();
    let (joined, plain): (Vec<_>, Vec<_>) =
        spans.iter().partition(|s| s.trace_id == PARENT.trace_id);
    assert_eq!(joined.len(), 3);
    assert!(joined
        .iter()
        .all(|s| s.trace_state.as_deref() == Some("vendor=abc,other=1")));
    let root = joined.last().expect("root");
    assert!(root.parent_is_remote && root.remote_parent);
    assert!(joined[..2].iter().all(|s| !s.parent_is_remote));
    assert!(plain
        .iter()
        .all(|s| s.trace_state.is_none() && !s.parent_is_remote));
    // The state is let go with the last run of that trace.
    start(&mut t, "later", Some(PARENT));
    run(&mut t, "later");
    assert!(sink.spans()[6..].iter().all(|s| s.trace_state.is_none()));
}
