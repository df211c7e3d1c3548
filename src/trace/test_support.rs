//! What the span model's test files share: a sink that keeps the ended spans
//! (the exporters live above this module) and span lookups.

use super::inputs::ModelResponse;
use super::model::Tracer;
use super::sink::SpanSink;
use super::span::SpanData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
pub struct Recorder(Mutex<Vec<SpanData>>);

impl Recorder {
    pub fn spans(&self) -> Vec<SpanData> {
        self.0.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl SpanSink for Recorder {
    fn on_end(&self, span: SpanData) {
        if let Ok(mut spans) = self.0.lock() {
            spans.push(span);
        }
    }
    fn force_flush(&self, _timeout: Duration) -> bool {
        true
    }
    fn shutdown(&self, _timeout: Duration) {}
}

/// A tracer keeping at most `max_open` invocations open, and its sink.
pub fn recording_tracer(max_open: usize) -> (Tracer, Arc<Recorder>) {
    let sink = Arc::new(Recorder::default());
    (Tracer::new(sink.clone(), max_open), sink)
}

pub fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

/// A string attribute's text.
pub fn text(s: &SpanData, key: &str) -> Option<String> {
    s.attribute(key)
        .and_then(|v| v.as_string())
        .map(|c| c.into_owned())
}

/// afterToolCallback saw `result_json`: held on the JavaScript side, then
/// supplied as the plugin does when the invocation ends.
pub fn after_tool_seeing(
    t: &mut Tracer,
    inv_id: &str,
    agent: Option<&str>,
    tool: &str,
    call_id: Option<&str>,
    result_json: &str,
) {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    t.after_tool(inv_id, agent, tool, call_id, token, None);
    t.supply_seen(inv_id, token, result_json.into());
}

/// A non-partial response of a streamed model call.
pub fn streamed_response(
    finish: Option<&str>,
    usage: [Option<i64>; 5],
    content: Option<&str>,
) -> ModelResponse {
    ModelResponse {
        finish_reason: finish.map(Into::into),
        usage,
        content_json: content.map(Into::into),
        ..Default::default()
    }
}
