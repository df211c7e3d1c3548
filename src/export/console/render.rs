//! Turns one trace's spans into the indented tree a developer reads:
//!
//! ```text
//! trace ab000000000000000000000000000001
//! invoke_agent weather_app                         1.52 s
//! └─ invoke_agent weather_agent                    1.52 s
//!    ├─ chat gemini-2.5-flash                      412 ms  in 1234 out 56
//!    ├─ execute_tool get_weather                  3.00 ms  ERROR retry 1
//!    │    ValueError: city not found: Atlantis
//!    ├─ chat gemini-2.5-flash                      380 ms  in 1290 out 12
//!    └─ execute_tool fetch_forecast                720 ms  interrupted
//! ```
//!
//! Names fill a fixed column (cut with `…`), durations line up right-aligned,
//! short marks follow; an error message gets its own line under its span.

use super::style::{human_count, human_duration, push_painted, truncate, width, Paint};
use crate::trace::span::{AttributeValue, SpanData, StatusCode};
use std::collections::{HashMap, HashSet};

/// The columns every line is laid out in (an 80-column terminal).
pub const LINE_WIDTH: usize = 80;
/// Tree prefix + name, padded to this width (longer names are cut).
const NAME_COLUMN: usize = 46;
/// Right-aligned duration after one space.
const DURATION_COLUMN: usize = 8;
/// A name keeps at least this many columns however deep the tree goes.
const MIN_NAME: usize = 12;
/// Names and messages are kept at most this long while buffered.
const KEEP_CHARS: usize = 160;

/// What the renderer needs of a finished span: a few small fields, so
/// buffered traces never hold conversation payloads.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsoleSpan {
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub error: bool,
    /// `error.type: message`, or whichever of the two exists.
    pub error_text: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub retry_count: Option<i64>,
    pub retry_outcome: Option<String>,
    pub interrupted: bool,
}

fn int_attr(span: &SpanData, key: &str) -> Option<i64> {
    match span.attribute(key)? {
        AttributeValue::Int(i) => Some(*i),
        AttributeValue::Double(d) if d.is_finite() => Some(*d as i64),
        AttributeValue::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

// Deferred values (captured payloads) are never rendered here: the keys read
// below are always plain strings, and rendering a deferred one could cost a
// whole conversation's JSON.
fn str_attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a str> {
    match span.attribute(key)? {
        AttributeValue::String(s) => Some(s),
        _ => None,
    }
}

fn keep(s: &str) -> String {
    if s.len() <= KEEP_CHARS {
        s.to_string()
    } else {
        s.chars().take(KEEP_CHARS).collect()
    }
}

impl ConsoleSpan {
    pub fn from_span(span: &SpanData) -> Self {
        let error = span.status.code == StatusCode::Error;
        let error_text = if error {
            let kind = str_attr(span, "error.type").filter(|s| !s.is_empty());
            let message = span.status.message.as_deref().filter(|s| !s.is_empty());
            match (kind, message) {
                // Messages often already start with their type.
                (Some(k), Some(m)) if m.starts_with(k) => Some(keep(m)),
                (Some(k), Some(m)) => Some(keep(&format!("{k}: {m}"))),
                (Some(k), None) => Some(keep(k)),
                (None, Some(m)) => Some(keep(m)),
                (None, None) => None,
            }
        } else {
            None
        };
        let interrupted = matches!(
            span.attribute("weave.google_adk.interrupted"),
            Some(AttributeValue::Bool(true))
        ) || str_attr(span, "weave.google_adk.interrupted") == Some("true");
        ConsoleSpan {
            span_id: span.span_id,
            parent_span_id: span.parent_span_id,
            name: keep(&span.name),
            start: span.start_time_unix_nano,
            end: span.end_time_unix_nano,
            error,
            error_text,
            input_tokens: int_attr(span, "gen_ai.usage.input_tokens"),
            output_tokens: int_attr(span, "gen_ai.usage.output_tokens"),
            retry_count: int_attr(span, "adk.retry.count"),
            retry_outcome: str_attr(span, "adk.retry.outcome").map(keep),
            interrupted,
        }
    }

    /// The short marks after the duration, each with its colour.
    fn marks(&self) -> Vec<(String, Option<Paint>)> {
        let mut marks = Vec::new();
        if self.error {
            marks.push(("ERROR".to_string(), Some(Paint::Red)));
        }
        match (self.retry_outcome.as_deref(), self.retry_count) {
            (Some("non_retryable"), _) => {
                marks.push(("non-retryable".to_string(), Some(Paint::Red)))
            }
            (Some("exceeded"), Some(n)) => {
                marks.push((format!("retry {n} exceeded"), Some(Paint::Red)))
            }
            (Some("exceeded"), None) => marks.push(("exceeded".to_string(), Some(Paint::Red))),
            (_, Some(n)) => marks.push((format!("retry {n}"), Some(Paint::Yellow))),
            (Some(other), None) => marks.push((other.replace('_', "-"), Some(Paint::Yellow))),
            (None, None) => {}
        }
        let tokens = match (self.input_tokens, self.output_tokens) {
            (Some(i), Some(o)) => Some(format!("in {} out {}", human_count(i), human_count(o))),
            (Some(i), None) => Some(format!("in {}", human_count(i))),
            (None, Some(o)) => Some(format!("out {}", human_count(o))),
            (None, None) => None,
        };
        if let Some(t) = tokens {
            marks.push((t, Some(Paint::Dim)));
        }
        if self.interrupted {
            marks.push(("interrupted".to_string(), Some(Paint::Yellow)));
        }
        marks
    }
}

/// Why a trace is printed without (all of) its spans.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceNotes {
    /// Spans of this trace dropped by the per-trace cap.
    pub omitted_spans: u64,
    /// Printed at shutdown: its root span never ended.
    pub incomplete: bool,
}

struct Renderer<'a> {
    spans: &'a [ConsoleSpan],
    children: HashMap<[u8; 8], Vec<usize>>,
    visited: HashSet<usize>,
    color: bool,
    out: String,
}

/// Renders one trace. Top-level trees are the spans without a parent, or
/// whose parent is not among `spans` (an incomplete trace); children are
/// ordered by start time. Colour codes appear only when `color` is true.
pub fn render_trace(
    trace_id: &[u8; 16],
    spans: &[ConsoleSpan],
    notes: TraceNotes,
    color: bool,
) -> String {
    let ids: HashSet<[u8; 8]> = spans.iter().map(|s| s.span_id).collect();
    let mut children: HashMap<[u8; 8], Vec<usize>> = HashMap::new();
    let mut tops = Vec::new();
    for (i, s) in spans.iter().enumerate() {
        match s.parent_span_id {
            Some(p) if ids.contains(&p) && p != s.span_id => children.entry(p).or_default().push(i),
            _ => tops.push(i),
        }
    }
    // Stable sorts: equal start times keep arrival (end) order.
    let by_start = |v: &mut Vec<usize>| v.sort_by_key(|&i| spans[i].start);
    by_start(&mut tops);
    children.values_mut().for_each(by_start);

    let mut r = Renderer {
        spans,
        children,
        visited: HashSet::new(),
        color,
        out: String::with_capacity(96 * (spans.len() + 2)),
    };
    let mut header = String::from("trace ");
    for b in trace_id {
        header.push_str(&format!("{b:02x}"));
    }
    if notes.incomplete {
        header.push_str(" (incomplete: root span never ended)");
    }
    push_painted(&mut r.out, &header, Some(Paint::Dim), color);
    r.out.push('\n');
    for &top in &tops {
        r.node(top, "", None);
    }
    // Spans caught in a parent cycle are unreachable from any top.
    let unreachable = (spans.len() - r.visited.len()) as u64;
    let not_shown = unreachable + notes.omitted_spans;
    if not_shown > 0 {
        let line = format!("… {not_shown} more span(s) of this trace not shown");
        push_painted(&mut r.out, &line, Some(Paint::Dim), color);
        r.out.push('\n');
    }
    r.out
}

impl Renderer<'_> {
    /// `prefix` is the tree drawing before this node's connector;
    /// `last` is None for a top-level node, else whether it is the last child.
    fn node(&mut self, i: usize, prefix: &str, last: Option<bool>) {
        if !self.visited.insert(i) {
            return;
        }
        let span = &self.spans[i];
        let connector = match last {
            None => "",
            Some(true) => "└─ ",
            Some(false) => "├─ ",
        };
        let child_prefix = match last {
            None => String::new(),
            Some(true) => format!("{prefix}   "),
            Some(false) => format!("{prefix}│  "),
        };
        let kids = self
            .children
            .get(&span.span_id)
            .cloned()
            .unwrap_or_default();

        // Name column: cut the name, never the tree.
        let tree_width = width(prefix) + width(connector);
        let name_room = NAME_COLUMN.saturating_sub(tree_width).max(MIN_NAME);
        let name = truncate(&span.name, name_room);
        let pad = name_room.saturating_sub(width(&name));
        push_painted(&mut self.out, prefix, Some(Paint::Dim), self.color);
        push_painted(&mut self.out, connector, Some(Paint::Dim), self.color);
        let name_paint = if last.is_none() {
            Some(Paint::Bold)
        } else if span.name.starts_with("invoke_agent") {
            Some(Paint::Cyan)
        } else if span.name.starts_with("chat") {
            Some(Paint::Magenta)
        } else if span.name.starts_with("execute_tool") {
            Some(Paint::Green)
        } else {
            None
        };
        push_painted(&mut self.out, &name, name_paint, self.color);
        let duration = human_duration(span.end.saturating_sub(span.start));
        let dpad = DURATION_COLUMN.saturating_sub(width(&duration));
        for _ in 0..pad + 1 + dpad {
            self.out.push(' ');
        }
        self.out.push_str(&duration);
        for (n, (mark, paint)) in span.marks().into_iter().enumerate() {
            self.out.push_str(if n == 0 { "  " } else { " " });
            push_painted(&mut self.out, &mark, paint, self.color);
        }
        self.out.push('\n');

        if let Some(text) = &span.error_text {
            let bar = if kids.is_empty() { "  " } else { "│ " };
            let lead = format!("{child_prefix}{bar}");
            let room = LINE_WIDTH.saturating_sub(width(&lead)).max(MIN_NAME * 2);
            push_painted(&mut self.out, &lead, Some(Paint::Dim), self.color);
            push_painted(
                &mut self.out,
                &truncate(text, room),
                Some(Paint::Red),
                self.color,
            );
            self.out.push('\n');
        }

        let n = kids.len();
        for (k, child) in kids.into_iter().enumerate() {
            self.node(child, &child_prefix, Some(k + 1 == n));
        }
    }
}

/// A dim one-line note (eviction counts) in the same style as the trees.
pub(super) fn push_note(out: &mut String, text: &str, color: bool) {
    push_painted(out, text, Some(Paint::Dim), color);
    out.push('\n');
}
