//! A span while it is recorded, and a tool call's span with what is known
//! of the call so far. Below the invocation that holds them and the
//! streamed-turn and attribute rules that fill them.

use super::genai::cut_to;
use super::span::{AttributeKey, AttributeValue, SpanData, Status, StatusCode};

pub const INTERRUPTED: &str = "weave.google_adk.interrupted";

/// A span being recorded.
#[derive(Debug)]
pub struct OpenSpan {
    pub id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub start: u64,
    pub attrs: Vec<(AttributeKey, AttributeValue)>,
    pub status: Status,
}

impl OpenSpan {
    pub fn new(id: [u8; 8], parent: Option<[u8; 8]>, name: String, start: u64) -> Self {
        OpenSpan {
            id,
            parent,
            name,
            start,
            attrs: Vec::with_capacity(12),
            status: Status::default(),
        }
    }

    /// Sets (or replaces) an attribute.
    pub fn set(&mut self, key: &'static str, value: AttributeValue) {
        if let Some(slot) = self.attrs.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value;
        } else {
            self.attrs.push((AttributeKey::Borrowed(key), value));
        }
    }

    pub fn set_str(&mut self, key: &'static str, value: impl Into<String>) {
        self.set(key, AttributeValue::String(value.into()));
    }

    pub fn remove(&mut self, key: &str) {
        self.attrs.retain(|(k, _)| k != key);
    }

    pub fn error(&mut self, error_type: &str, message: &str) {
        self.set_str("error.type", error_type);
        self.status = Status {
            code: StatusCode::Error,
            message: Some(message.to_string()),
        };
    }

    /// The ended span. `limit` (the attribute value length limit) cuts its
    /// string values here, every one whatever set it, as an OpenTelemetry
    /// SDK's span limits do; a deferred value carries the limit and is cut
    /// as it is rendered.
    pub fn finish(mut self, trace_id: [u8; 16], end: u64, limit: Option<usize>) -> SpanData {
        if let Some(limit) = limit {
            for (_, value) in &mut self.attrs {
                cut(value, limit);
            }
        }
        SpanData {
            trace_id,
            span_id: self.id,
            parent_span_id: self.parent,
            name: self.name,
            start_time_unix_nano: self.start,
            end_time_unix_nano: end.max(self.start),
            attributes: self.attrs,
            status: self.status,
            remote_parent: false,
            parent_is_remote: false,
            trace_state: None,
        }
    }
}

fn cut(value: &mut AttributeValue, limit: usize) {
    match value {
        AttributeValue::String(s) => cut_to(s, limit),
        AttributeValue::StringArray(items) => items.iter_mut().for_each(|s| cut_to(s, limit)),
        _ => {}
    }
}

#[derive(Debug)]
pub struct ToolSpan {
    pub span: OpenSpan,
    pub agent: String,
    pub tool: String,
    /// The function call id the model gave, if any.
    pub call_id: Option<String>,
    /// False when the id was missing or already taken by an open span: the
    /// span is then matched first-in first-out per (agent, tool).
    pub keyed: bool,
    /// `afterToolCallback` ran: the span waits only for its function response.
    pub callbacks_done: bool,
    pub last_callback: u64,
    pub errored: bool,
    /// The result afterToolCallback saw, as JSON: the span's outcome when no
    /// function response event brings one.
    pub seen_result: Option<String>,
    /// The JavaScript side's handle of that result, not yet made JSON (0:
    /// none): asked for only when the invocation ends without the event.
    pub seen_token: u32,
}
