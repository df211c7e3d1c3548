//! `getFinishedSpans()`: spans as JSON text that lib/tracing.js turns into
//! api.md's FinishedSpan objects (times become BigInt there). Not a hot path.

use crate::trace::ids::hex;
use crate::trace::span::{AttributeValue, SpanData};
use serde_json::{json, Map, Value};

fn attribute(v: &AttributeValue) -> Value {
    match v {
        AttributeValue::String(s) => Value::String(s.clone()),
        AttributeValue::Int(i) => json!(i),
        AttributeValue::Double(f) => json!(f),
        AttributeValue::Bool(b) => json!(b),
        AttributeValue::StringArray(a) => json!(a),
        AttributeValue::Deferred(d) => Value::String(d.render()),
    }
}

pub fn spans_json(spans: &[SpanData]) -> String {
    let list: Vec<Value> = spans
        .iter()
        .map(|s| {
            let mut attrs = Map::new();
            for (k, v) in &s.attributes {
                attrs.insert(k.to_string(), attribute(v));
            }
            let mut status = Map::new();
            status.insert("code".into(), json!(s.status.code as u8));
            if let Some(m) = &s.status.message {
                status.insert("message".into(), json!(m));
            }
            let mut o = Map::new();
            o.insert("traceId".into(), json!(hex(&s.trace_id)));
            o.insert("spanId".into(), json!(hex(&s.span_id)));
            if let Some(p) = &s.parent_span_id {
                o.insert("parentSpanId".into(), json!(hex(p)));
            }
            o.insert("name".into(), json!(s.name));
            o.insert(
                "startTimeUnixNano".into(),
                json!(s.start_time_unix_nano.to_string()),
            );
            o.insert(
                "endTimeUnixNano".into(),
                json!(s.end_time_unix_nano.to_string()),
            );
            o.insert("attributes".into(), Value::Object(attrs));
            o.insert("status".into(), Value::Object(status));
            Value::Object(o)
        })
        .collect();
    Value::Array(list).to_string()
}
