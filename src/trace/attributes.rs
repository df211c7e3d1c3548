//! Attribute rules that need more than the span model's state: generation
//! config, tool outcomes (retry-aware) and deferred message JSON.

use super::genai::{parse_lenient, DeferredMessages, MessageShape};
use super::open_span::ToolSpan;
use super::retry_outcome::{retry_details, RetryDetails, RESPONSE_TYPE};
use super::span::AttributeValue;
use super::tool_failure::not_found_answer;
use memchr::memmem::Finder;
use serde_json::Value;
use std::sync::{Arc, LazyLock};

// Built once: `str::contains` sets up its searcher at every call, which
// cost more than the search itself on a tool result of a few hundred bytes.
static RESPONSE_TYPE_FINDER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(RESPONSE_TYPE));

pub fn deferred(
    raw: impl Into<String>,
    shape: MessageShape,
    limit: Option<usize>,
) -> AttributeValue {
    AttributeValue::Deferred(Arc::new(DeferredMessages {
        raw: raw.into(),
        shape,
        limit,
    }))
}

/// Request attributes from the generation config fields.
fn config_attributes(cfg: &Value) -> Vec<(&'static str, AttributeValue)> {
    let mut out = Vec::new();
    const NUMBERS: [(&str, &str); 4] = [
        ("temperature", "gen_ai.request.temperature"),
        ("topP", "gen_ai.request.top_p"),
        ("frequencyPenalty", "gen_ai.request.frequency_penalty"),
        ("presencePenalty", "gen_ai.request.presence_penalty"),
    ];
    for (src, key) in NUMBERS {
        if let Some(v) = cfg.get(src).and_then(Value::as_f64) {
            out.push((key, AttributeValue::Double(v)));
        }
    }
    const INTS: [(&str, &str); 3] = [
        ("maxOutputTokens", "gen_ai.request.max_tokens"),
        ("seed", "gen_ai.request.seed"),
        ("candidateCount", "gen_ai.request.choice.count"),
    ];
    for (src, key) in INTS {
        match cfg.get(src) {
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    out.push((key, AttributeValue::Int(i)));
                } else if let Some(f) = n.as_f64() {
                    out.push((key, AttributeValue::Double(f)));
                }
            }
            _ => continue,
        }
    }
    // An empty list sets nothing (as Weave reads it: no stop sequences).
    if let Some(stops) = cfg
        .get("stopSequences")
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    {
        let list = stops
            .iter()
            .map(|s| match s {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        out.push((
            "gen_ai.request.stop_sequences",
            AttributeValue::StringArray(list),
        ));
    }
    out
}

/// The last generation config's attributes, by its JSON text: an agent
/// sends the same config on every model call, so it is parsed once. One
/// entry: bounded by the config the user wrote.
#[derive(Debug, Default)]
pub struct ConfigCache {
    last: Option<(String, Vec<(&'static str, AttributeValue)>)>,
}

impl ConfigCache {
    /// The request attributes of the config whose JSON is `json`.
    pub fn attributes(&mut self, json: &str) -> &[(&'static str, AttributeValue)] {
        let hit = matches!(&self.last, Some((text, _)) if text == json);
        if !hit {
            let attributes = parse_lenient(json)
                .map(|cfg| config_attributes(&cfg))
                .unwrap_or_default();
            self.last = Some((json.to_string(), attributes));
        }
        self.last.as_ref().map_or(&[], |(_, a)| a.as_slice())
    }
}

/// A tool span's outcome from the function response the model will see.
pub fn apply_tool_outcome(t: &mut ToolSpan, response_json: String, capture: bool) {
    // Parsing a big tool result on the JavaScript thread only to find it is
    // not a retry response would cost milliseconds: look for the marker first.
    let parsed: Value = if RESPONSE_TYPE_FINDER
        .find(response_json.as_bytes())
        .is_some()
    {
        parse_lenient(&response_json).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if let Some(RetryDetails {
        error_type,
        details,
        count,
        outcome,
    }) = retry_details(&parsed)
    {
        let message = match (&t.span.status.message, t.errored) {
            (Some(m), true) => m.clone(),
            _ => details,
        };
        t.span.error(&error_type, &message);
        t.span.set("adk.retry.count", AttributeValue::Int(count));
        t.span.set(
            "adk.retry.outcome",
            AttributeValue::String(outcome.to_string()),
        );
        return;
    }
    if t.errored {
        return;
    }
    // Registered first, the retry plugin answers an invented name before
    // this plugin sees the error: the span ends as when it saw it.
    if let Some(message) = not_found_answer(&t.tool, &response_json) {
        t.span.error("Error", &message);
        return;
    }
    if capture {
        t.span.set_str("gen_ai.tool.call.result", response_json);
    }
}
