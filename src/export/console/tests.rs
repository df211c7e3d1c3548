use super::*;
use crate::trace::span::{AttributeValue, DeferredValue, Status, StatusCode};
use std::sync::Arc;

/// A writer the test can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(lock(&self.0).clone()).expect("utf-8 output")
    }
}

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000_000_000;

fn trace_id(n: u8) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[0] = 0xab;
    id[15] = n;
    id
}

fn span(trace: u8, id: u8, parent: Option<u8>, name: &str, start_ms: u64, end_ms: u64) -> SpanData {
    SpanData {
        trace_id: trace_id(trace),
        span_id: [0, 0, 0, 0, 0, 0, 0, id],
        parent_span_id: parent.map(|p| [0, 0, 0, 0, 0, 0, 0, p]),
        name: name.to_string(),
        start_time_unix_nano: T0 + start_ms * MS,
        end_time_unix_nano: T0 + end_ms * MS,
        attributes: Vec::new(),
        status: Status::default(),
        remote_parent: false,
        parent_is_remote: false,
        trace_state: None,
    }
}

fn with(mut s: SpanData, key: &str, value: AttributeValue) -> SpanData {
    s.attributes.push((key.to_string().into(), value));
    s
}

fn error(mut s: SpanData, kind: &str, message: &str) -> SpanData {
    s.status = Status {
        code: StatusCode::Error,
        message: Some(message.to_string()),
    };
    with(s, "error.type", AttributeValue::String(kind.to_string()))
}

fn chat(trace: u8, id: u8, parent: u8, start: u64, end: u64, input: i64, output: i64) -> SpanData {
    let s = span(trace, id, Some(parent), "chat gemini-2.5-flash", start, end);
    let s = with(
        s,
        "gen_ai.operation.name",
        AttributeValue::String("chat".into()),
    );
    let s = with(s, "gen_ai.usage.input_tokens", AttributeValue::Int(input));
    with(s, "gen_ai.usage.output_tokens", AttributeValue::Int(output))
}

fn plain_sink() -> (ConsoleSink, Shared) {
    let out = Shared::default();
    (ConsoleSink::with_writer(Box::new(out.clone()), false), out)
}

/// A weather run: root, the agent, two model calls around a failing tool that
/// the retry plugin handled, and a second tool interrupted at the end. Spans
/// arrive in end order, children before parents, as the plugin ends them.
fn weather_run(t: u8) -> Vec<SpanData> {
    let tool = span(t, 4, Some(2), "execute_tool get_weather", 414, 417);
    let tool = error(tool, "ValueError", "city not found: Atlantis");
    let tool = with(tool, "adk.retry.count", AttributeValue::Int(1));
    let tool = with(
        tool,
        "adk.retry.outcome",
        AttributeValue::String("retry".into()),
    );
    let slow = span(t, 6, Some(2), "execute_tool fetch_forecast", 800, 1520);
    let slow = with(
        slow,
        "weave.google_adk.interrupted",
        AttributeValue::Bool(true),
    );
    vec![
        chat(t, 3, 2, 2, 414, 1234, 56),
        tool,
        chat(t, 5, 2, 418, 798, 1290, 12),
        slow,
        span(t, 2, Some(1), "invoke_agent weather_agent", 1, 1520),
        span(t, 1, None, "invoke_agent weather_app", 0, 1521),
    ]
}

const WEATHER_TREE: &str = "\
trace ab00000000000000000000000000000%
invoke_agent weather_app                         1.52 s
└─ invoke_agent weather_agent                    1.52 s
   ├─ chat gemini-2.5-flash                      412 ms  in 1234 out 56
   ├─ execute_tool get_weather                  3.00 ms  ERROR retry 1
   │    ValueError: city not found: Atlantis
   ├─ chat gemini-2.5-flash                      380 ms  in 1290 out 12
   └─ execute_tool fetch_forecast                720 ms  interrupted
";

fn weather_tree(t: u8) -> String {
    WEATHER_TREE.replace("0%", &format!("{t:02x}"))
}

#[test]
fn prints_the_whole_trace_when_the_root_ends() {
    let (sink, out) = plain_sink();
    let mut spans = weather_run(1);
    let root = spans.pop().expect("root");
    for s in spans {
        sink.on_end(s);
    }
    assert_eq!(out.text(), "", "nothing printed before the root ends");
    assert_eq!(sink.buffered_trace_count(), 1);
    sink.on_end(root);
    assert_eq!(out.text(), weather_tree(1));
    assert_eq!(sink.buffered_trace_count(), 0);
    assert_eq!(sink.buffered_span_count(), 0);
    assert_eq!(sink.dropped_count(), 0);
}

#[test]
fn every_line_fits_80_columns() {
    let (sink, out) = plain_sink();
    let long = "execute_tool a_tool_with_a_name_far_too_long_for_any_terminal_column";
    let deep = span(1, 3, Some(2), long, 1, 2);
    let deep = error(deep, "Error", &"x".repeat(300));
    sink.on_end(deep);
    sink.on_end(span(1, 2, Some(1), "invoke_agent helper", 1, 3));
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 4));
    let text = out.text();
    for line in text.lines() {
        assert!(line.chars().count() <= LINE_WIDTH, "too wide: {line:?}");
    }
    assert!(text.contains("\n   └─ execute_tool a_tool_with_a_name_far_too…  1.00 ms  ERROR\n"));
    assert!(text.contains("xxx…\n"));
}

#[test]
fn children_are_ordered_by_start_time_not_end_time() {
    let (sink, out) = plain_sink();
    sink.on_end(span(1, 3, Some(1), "execute_tool late_start", 50, 60));
    sink.on_end(span(1, 2, Some(1), "execute_tool early_start", 10, 90));
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 100));
    let text = out.text();
    let early = text.find("early_start").expect("early shown");
    let late = text.find("late_start").expect("late shown");
    assert!(early < late, "{text}");
}

#[test]
fn retry_marks_are_what_the_span_says() {
    let render_one = |count: Option<i64>, outcome: &str| {
        let (sink, out) = plain_sink();
        let mut tool = error(span(1, 2, Some(1), "execute_tool t", 0, 1), "E", "boom");
        if let Some(n) = count {
            tool = with(tool, "adk.retry.count", AttributeValue::Int(n));
        }
        tool = with(
            tool,
            "adk.retry.outcome",
            AttributeValue::String(outcome.into()),
        );
        sink.on_end(tool);
        sink.on_end(span(1, 1, None, "invoke_agent app", 0, 2));
        let text = out.text();
        let line = text.lines().nth(2).expect("tool line").to_string();
        line.split("ms  ").nth(1).expect("marks").to_string()
    };
    assert_eq!(render_one(Some(2), "retry"), "ERROR retry 2");
    assert_eq!(render_one(Some(3), "exceeded"), "ERROR retry 3 exceeded");
    assert_eq!(render_one(Some(0), "non_retryable"), "ERROR non-retryable");
}

#[test]
fn colour_only_when_asked() {
    let out = Shared::default();
    let sink = ConsoleSink::with_writer(Box::new(out.clone()), true);
    for s in weather_run(1) {
        sink.on_end(s);
    }
    let text = out.text();
    assert!(text.contains("\x1b[31mERROR\x1b[0m"), "{text}");
    // Stripping the escapes gives exactly the plain picture.
    let mut plain = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    assert_eq!(plain, weather_tree(1));

    let (plain_sink, plain_out) = plain_sink();
    for s in weather_run(1) {
        plain_sink.on_end(s);
    }
    assert!(!plain_out.text().contains('\x1b'));
}

#[test]
fn interleaved_traces_print_separately() {
    let (sink, out) = plain_sink();
    let mut a = weather_run(1);
    let mut b = weather_run(2);
    let root_a = a.pop().expect("root");
    let root_b = b.pop().expect("root");
    for (x, y) in a.into_iter().zip(b) {
        sink.on_end(y);
        sink.on_end(x);
    }
    sink.on_end(root_b);
    sink.on_end(root_a);
    assert_eq!(
        out.text(),
        format!("{}{}", weather_tree(2), weather_tree(1))
    );
}

#[test]
fn unfinished_traces_are_evicted_oldest_first_and_counted() {
    let out = Shared::default();
    let limits = ConsoleLimits {
        max_traces: 3,
        max_spans: 100,
        max_spans_per_trace: 100,
    };
    let sink = ConsoleSink::with_writer(Box::new(out.clone()), false).with_limits(limits);
    // 10 traces whose roots never come, two spans each.
    for t in 10..20u8 {
        sink.on_end(span(t, 2, Some(1), "invoke_agent lost", 0, 1));
        sink.on_end(span(t, 3, Some(1), "chat m", 0, 1));
        assert!(sink.buffered_trace_count() <= 3);
    }
    assert_eq!(sink.buffered_trace_count(), 3);
    assert_eq!(sink.buffered_span_count(), 6);
    assert_eq!(sink.evicted_trace_count(), 7);
    assert_eq!(sink.dropped_count(), 14);
    assert_eq!(out.text(), "", "evictions alone print nothing");

    // The newest unfinished trace survived and still prints whole.
    sink.on_end(span(19, 1, None, "invoke_agent app", 0, 2));
    let text = out.text();
    assert!(
        text.starts_with(
            "(console exporter: 7 unfinished trace(s) dropped, 14 span(s); \
             their root spans never ended)\ntrace ab000000000000000000000000000013\n"
        ),
        "{text}"
    );
    assert!(text.contains("├─ invoke_agent lost") && text.contains("└─ chat m"));
    assert_eq!(sink.buffered_trace_count(), 2);
}

#[test]
fn the_span_cap_bounds_memory_across_traces() {
    let limits = ConsoleLimits {
        max_traces: 1000,
        max_spans: 50,
        max_spans_per_trace: 1000,
    };
    let (sink, _out) = plain_sink();
    let sink = sink.with_limits(limits);
    for t in 0..200u8 {
        for id in 2..7u8 {
            sink.on_end(span(t, id, Some(1), "chat m", 0, 1));
            assert!(sink.buffered_span_count() <= 50);
        }
    }
    assert_eq!(sink.buffered_span_count(), 50);
    assert_eq!(sink.buffered_trace_count(), 10);
    assert_eq!(sink.evicted_trace_count(), 190);
    assert_eq!(sink.dropped_count(), 190 * 5);
}

#[test]
fn one_huge_trace_is_capped_and_says_so() {
    let limits = ConsoleLimits {
        max_traces: 10,
        max_spans: 100,
        max_spans_per_trace: 4,
    };
    let (sink, out) = plain_sink();
    let sink = sink.with_limits(limits);
    for id in 2..12u8 {
        sink.on_end(span(1, id, Some(1), "execute_tool t", u64::from(id), 20));
    }
    assert_eq!(sink.buffered_span_count(), 4);
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 30));
    let text = out.text();
    assert_eq!(text.matches("execute_tool t").count(), 4, "{text}");
    assert!(
        text.ends_with("… 6 more span(s) of this trace not shown\n"),
        "{text}"
    );
    assert_eq!(sink.dropped_count(), 6);
}

#[test]
fn shutdown_prints_what_never_completed_then_drops() {
    let (sink, out) = plain_sink();
    sink.on_end(span(7, 3, Some(2), "chat m", 1, 2));
    sink.on_end(span(7, 2, Some(1), "invoke_agent a", 0, 3));
    sink.shutdown(Duration::from_millis(10));
    assert_eq!(
        out.text(),
        "trace ab000000000000000000000000000007 (incomplete: root span never ended)\n\
         invoke_agent a                                  3.00 ms\n\
         └─ chat m                                       1.00 ms\n"
    );
    sink.on_end(span(7, 1, None, "invoke_agent app", 0, 4));
    sink.shutdown(Duration::from_millis(10));
    assert_eq!(out.text().matches("trace ").count(), 1);
    assert_eq!(sink.dropped_count(), 1);
}

#[test]
fn a_span_after_its_root_is_dropped_not_leaked() {
    let (sink, out) = plain_sink();
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 4));
    sink.on_end(span(1, 2, Some(1), "chat late", 0, 5));
    assert_eq!(sink.buffered_trace_count(), 0);
    assert_eq!(sink.dropped_count(), 1);
    assert!(!out.text().contains("late"));
}

#[test]
fn parent_cycles_and_orphans_never_hang() {
    let (sink, out) = plain_sink();
    // 3 and 4 point at each other; 5's parent is unknown.
    sink.on_end(span(1, 3, Some(4), "chat a", 0, 1));
    sink.on_end(span(1, 4, Some(3), "chat b", 0, 1));
    sink.on_end(span(1, 5, Some(9), "chat orphan", 0, 1));
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 4));
    let text = out.text();
    assert!(
        text.contains("\nchat orphan"),
        "orphans print at top level: {text}"
    );
    assert!(
        text.ends_with("… 2 more span(s) of this trace not shown\n"),
        "{text}"
    );
}

#[derive(Debug)]
struct Exploding;
impl DeferredValue for Exploding {
    fn render(&self) -> String {
        panic!("the console must never render captured payloads")
    }
}

#[test]
fn captured_payloads_are_neither_rendered_nor_buffered() {
    let (sink, out) = plain_sink();
    let c = chat(1, 2, 1, 0, 1, 10, 2);
    let c = with(
        c,
        "gen_ai.input.messages",
        AttributeValue::Deferred(Arc::new(Exploding)),
    );
    sink.on_end(c);
    sink.on_end(span(1, 1, None, "invoke_agent app", 0, 2));
    assert!(out.text().contains("in 10 out 2"));
}

#[test]
fn unnamed_root_and_big_token_counts() {
    let (sink, out) = plain_sink();
    sink.on_end(chat(1, 2, 1, 0, 2_500, 1_234_567, 45_678));
    sink.on_end(span(1, 1, None, "invoke_agent", 0, 125_000));
    assert_eq!(
        out.text(),
        "trace ab000000000000000000000000000001\n\
         invoke_agent                                      2m05s\n\
         └─ chat gemini-2.5-flash                         2.50 s  in 1.2M out 45.7k\n"
    );
}

#[test]
fn a_run_that_joined_an_application_span_prints_when_its_root_ends() {
    let (sink, out) = plain_sink();
    let mut spans = weather_run(7);
    // The root's parent is the application's span, which this sink never sees.
    if let Some(root) = spans.last_mut() {
        root.parent_span_id = Some([0x55; 8]);
        root.remote_parent = true;
    }
    for s in spans {
        sink.on_end(s);
    }
    let text = out.text();
    assert!(text.contains("invoke_agent weather_app"), "{text}");
    assert!(text.contains("└─ invoke_agent weather_agent"), "{text}");
    assert_eq!(sink.buffered_trace_count(), 0);
}
