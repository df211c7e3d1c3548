//! Model calls whose answer arrives as several non-partial responses.
//!
//! With `StreamingMode.SSE`, ADK 2.0.0's StreamingResponseAggregator splits
//! one model call into: the text (no finishReason), then the function calls,
//! then — after the tools ran, from `close()` — a usage-only response; a
//! text-only call gives one response. Nothing in a response says it is the
//! last, so the call's `chat` span stays open, collecting, until something
//! shows the call is over: the agent's next model call, a model error, the
//! agent's end, or the end of the invocation. It ends at its last response.

use super::attributes::deferred;
use super::genai::MessageShape;
use super::inputs::ModelResponse;
use super::open_span::{OpenSpan, INTERRUPTED};
use super::span::{AttributeValue, SpanData};
use serde::Deserialize;
use serde_json::value::RawValue;

/// The token count attributes, in `ModelResponse::usage` order.
const USAGE: [&str; 5] = [
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.total_tokens",
    "gen_ai.usage.reasoning.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
];

/// What the responses of one model call say, as far as the span shows it.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Lowercased.
    pub finish_reason: Option<String>,
    pub usage: [Option<i64>; 5],
    pub error: Option<(String, String)>,
    /// Content JSON (captured runs only).
    pub content: Option<String>,
    /// `gen_ai.response.id` and `.model` (when not empty).
    pub response_id: Option<String>,
    pub response_model: Option<String>,
}

impl Outcome {
    /// Writes the response attributes (and an error) on a `chat` span.
    pub fn apply(self, span: &mut OpenSpan, capture: bool, limit: Option<usize>) {
        // An empty reason is none (as Weave reads it): no attribute, and the
        // output message says "".
        let finish_reason = self.finish_reason.filter(|f| !f.is_empty());
        if let Some(fr) = &finish_reason {
            span.set(
                "gen_ai.response.finish_reasons",
                AttributeValue::StringArray(vec![fr.clone()]),
            );
        }
        if capture {
            if let Some(c) = self.content {
                let finish_reason = finish_reason.unwrap_or_default();
                span.set(
                    "gen_ai.output.messages",
                    deferred(c, MessageShape::OutputOne { finish_reason }, limit),
                );
                span.set("gen_ai.output.type", AttributeValue::String("text".into()));
            }
        }
        for (key, value) in [
            ("gen_ai.response.id", self.response_id),
            ("gen_ai.response.model", self.response_model),
        ] {
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                span.set(key, AttributeValue::String(v));
            }
        }
        for (key, value) in USAGE.iter().zip(self.usage) {
            if let Some(v) = value {
                span.set(key, AttributeValue::Int(v));
            }
        }
        if let Some((code, message)) = self.error {
            span.error(&code, &message);
        }
    }
}

/// The error a response reports (`errorCode`, message defaulting to it):
/// a model's response, or an event standing for one.
pub fn response_error(code: &Option<String>, message: &Option<String>) -> Option<(String, String)> {
    let code = code.as_deref().filter(|c| !c.is_empty())?;
    let message = message.as_deref().filter(|m| !m.is_empty()).unwrap_or(code);
    Some((code.to_string(), message.to_string()))
}

/// The `chat` span of a streamed model call that has had a response.
#[derive(Debug)]
pub struct StreamedTurn {
    pub span: OpenSpan,
    /// Content JSON of each response that had content, in order.
    contents: Vec<String>,
    finish_reason: Option<String>,
    usage: Option<[Option<i64>; 5]>,
    error: Option<(String, String)>,
    response_id: Option<String>,
    response_model: Option<String>,
    /// When the last response arrived: the span's end.
    pub last_response: u64,
    /// Responses afterModelCallback gave whose events have not come yet: ADK
    /// sends one event for each response that has parts, an error code or
    /// usage alone (`ModelResponse::yields_event`), which then adds nothing.
    /// A response afterModelCallback never gave (an earlier plugin answered
    /// it) comes only as its event, which adds it, until the call has said
    /// it is done (a finish reason).
    pub awaiting_events: u32,
}

impl StreamedTurn {
    pub fn new(span: OpenSpan) -> Self {
        StreamedTurn {
            span,
            contents: Vec::new(),
            finish_reason: None,
            usage: None,
            error: None,
            response_id: None,
            response_model: None,
            last_response: 0,
            awaiting_events: 0,
        }
    }

    /// Adds one non-partial response: its parts come after the earlier ones;
    /// a finish reason, a usageMetadata (whole) or an error replaces the
    /// earlier one.
    pub fn add(&mut self, resp: ModelResponse, now: u64) {
        if let Some(fr) = resp.finish_reason.as_deref().filter(|f| !f.is_empty()) {
            self.finish_reason = Some(fr.to_lowercase());
        }
        if resp.has_usage || resp.usage.iter().any(Option::is_some) {
            self.usage = Some(resp.usage);
        }
        if let Some(e) = response_error(&resp.error_code, &resp.error_message) {
            self.error = Some(e);
        }
        if let Some(c) = resp.content_json {
            self.contents.push(c);
        }
        for (kept, given) in [
            (&mut self.response_id, resp.response_id),
            (&mut self.response_model, resp.response_model),
        ] {
            if let Some(v) = given.filter(|v| !v.is_empty()) {
                *kept = Some(v);
            }
        }
        self.last_response = now;
    }

    /// The call failed (onModelErrorCallback) after some responses.
    pub fn fail(&mut self, error_type: &str, message: &str, now: u64) {
        self.error = Some((error_type.to_string(), message.to_string()));
        self.last_response = now;
    }

    /// Whether the model said it was done (a finish reason came).
    pub fn finished_by_model(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// The finished span. `interrupted` (the run was cut off before the
    /// model said it was done) flags it and ends it at `now`.
    pub fn finish(
        mut self,
        trace_id: [u8; 16],
        capture: bool,
        limit: Option<usize>,
        interrupted_at: Option<u64>,
    ) -> SpanData {
        let outcome = Outcome {
            finish_reason: self.finish_reason,
            usage: self.usage.unwrap_or_default(),
            error: self.error,
            content: merge_contents(std::mem::take(&mut self.contents)),
            response_id: self.response_id.take(),
            response_model: self.response_model.take(),
        };
        outcome.apply(&mut self.span, capture, limit);
        let end = match interrupted_at {
            Some(now) => {
                self.span.set(INTERRUPTED, AttributeValue::Bool(true));
                now
            }
            None => self.last_response,
        };
        self.span.finish(trace_id, end, limit)
    }
}

#[derive(Deserialize)]
struct ContentParts<'a> {
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parts: Option<Vec<&'a RawValue>>,
}

/// One Content JSON holding the parts of every response in order (the role
/// of the first that has one). The parts are copied as they are: only the
/// two top-level fields are parsed.
pub fn merge_contents(mut contents: Vec<String>) -> Option<String> {
    if contents.len() < 2 {
        return contents.pop();
    }
    let size: usize = contents.iter().map(String::len).sum();
    let mut role: Option<&RawValue> = None;
    let mut parts: Vec<&RawValue> = Vec::new();
    for c in &contents {
        // JavaScript wrote these with JSON.stringify: a failure would be a
        // bug upstream; such a response adds no parts.
        let Ok(content) = serde_json::from_str::<ContentParts>(c) else {
            continue;
        };
        if role.is_none() {
            role = content.role.filter(|r| r.get() != "null");
        }
        parts.extend(content.parts.unwrap_or_default());
    }
    let mut out = String::with_capacity(size + 32);
    out.push('{');
    if let Some(r) = role {
        out.push_str(r#""role":"#);
        out.push_str(r.get());
        out.push(',');
    }
    out.push_str(r#""parts":["#);
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(p.get());
    }
    out.push_str("]}");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::test_support::streamed_response as resp;
    use serde_json::{json, Value};

    #[test]
    fn merged_contents_keep_every_part_in_order() {
        let merged = merge_contents(vec![
            r#"{"role":"model","parts":[{"text":"Let me check."}]}"#.into(),
            r#"{"parts":[{"functionCall":{"name":"add","args":{"a":1},"id":"c1"}},{"text":"x"}],"role":"model"}"#.into(),
        ])
        .unwrap();
        let v: Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(
            v,
            json!({"role":"model","parts":[{"text":"Let me check."},{"functionCall":{"name":"add","args":{"a":1},"id":"c1"}},{"text":"x"}]})
        );
    }

    #[test]
    fn one_content_is_kept_as_is_and_garbage_adds_nothing() {
        let one = r#"{"role":"model","parts":[]}"#.to_string();
        assert_eq!(merge_contents(vec![one.clone()]), Some(one));
        assert_eq!(merge_contents(vec![]), None);
        let merged = merge_contents(vec!["not json".into(), r#"{"parts":[1]}"#.into()]).unwrap();
        assert_eq!(merged, r#"{"parts":[1]}"#);
    }

    #[test]
    fn last_finish_reason_and_whole_last_usage_win() {
        let mut turn = StreamedTurn::new(OpenSpan::new([1; 8], None, "chat m".into(), 10));
        turn.add(
            resp(
                None,
                [Some(5), Some(1), Some(6), None, Some(4)],
                Some(r#"{"parts":[{"text":"a"}]}"#),
            ),
            20,
        );
        turn.add(
            resp(Some("STOP"), [None; 5], Some(r#"{"parts":[{"text":"b"}]}"#)),
            30,
        );
        assert!(turn.finished_by_model());
        turn.add(
            resp(None, [Some(5), Some(3), Some(8), None, None], None),
            40,
        );
        let span = turn.finish([0; 16], true, None, None);
        assert_eq!(span.end_time_unix_nano, 40);
        let int = |k: &str| match span.attribute(k) {
            Some(AttributeValue::Int(i)) => Some(*i),
            _ => None,
        };
        assert_eq!(int("gen_ai.usage.output_tokens"), Some(3));
        assert_eq!(int("gen_ai.usage.total_tokens"), Some(8));
        // Not merged field by field: the last usageMetadata has no cache count.
        assert_eq!(int("gen_ai.usage.cache_read.input_tokens"), None);
        assert!(matches!(
            span.attribute("gen_ai.response.finish_reasons"),
            Some(AttributeValue::StringArray(v)) if v == &["stop".to_string()]
        ));
        let out = span
            .attribute("gen_ai.output.messages")
            .and_then(|v| v.as_string())
            .unwrap()
            .into_owned();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            json!([{"role":"assistant","parts":[{"type":"text","content":"a"},{"type":"text","content":"b"}],"finish_reason":"stop"}])
        );
    }

    #[test]
    fn the_last_response_id_and_model_given_win() {
        let mut turn = StreamedTurn::new(OpenSpan::new([1; 8], None, "chat m".into(), 10));
        let with = |id: Option<&str>, model: Option<&str>| ModelResponse {
            response_id: id.map(Into::into),
            response_model: model.map(Into::into),
            ..resp(None, [None; 5], None)
        };
        turn.add(with(Some("r1"), Some("m1")), 20);
        turn.add(with(Some("r2"), Some("")), 30);
        turn.add(with(None, None), 40);
        let span = turn.finish([0; 16], true, None, None);
        let text = |k: &str| {
            span.attribute(k)
                .and_then(|v| v.as_string())
                .map(|t| t.into_owned())
        };
        assert_eq!(text("gen_ai.response.id").as_deref(), Some("r2"));
        assert_eq!(text("gen_ai.response.model").as_deref(), Some("m1"));
    }

    #[test]
    fn an_empty_usage_metadata_still_replaces_the_earlier_one() {
        let mut turn = StreamedTurn::new(OpenSpan::new([1; 8], None, "chat m".into(), 10));
        turn.add(resp(None, [Some(5), None, None, None, None], None), 20);
        turn.add(
            ModelResponse {
                has_usage: true,
                ..resp(None, [None; 5], None)
            },
            30,
        );
        let span = turn.finish([0; 16], true, None, Some(99));
        assert!(span.attribute("gen_ai.usage.input_tokens").is_none());
        assert_eq!(span.end_time_unix_nano, 99);
        assert!(matches!(
            span.attribute(INTERRUPTED),
            Some(AttributeValue::Bool(true))
        ));
    }
}
