//! The hand-written span encoding against the generated prost types: the
//! reference below is the struct-building encoder this crate used before
//! spans were prepared on the JavaScript thread. Byte for byte.

use super::*;
use crate::export::config::{SDK_NAME, SDK_VERSION};
use crate::export::otlp::encode::Encoder;
use crate::export::otlp::proto::{self, any_value::Value};

fn reference(config: &OtlpConfig, spans: Vec<SpanData>) -> Vec<u8> {
    let value = |v: AttributeValue| match v {
        AttributeValue::String(s) => Value::StringValue(s),
        AttributeValue::Deferred(d) => Value::StringValue(d.render()),
        AttributeValue::Int(i) => Value::IntValue(i),
        AttributeValue::Double(d) => Value::DoubleValue(d),
        AttributeValue::Bool(b) => Value::BoolValue(b),
        AttributeValue::StringArray(items) => Value::ArrayValue(proto::ArrayValue {
            values: items
                .into_iter()
                .map(|s| proto::AnyValue {
                    value: Some(Value::StringValue(s)),
                })
                .collect(),
        }),
    };
    let key_value = |key: String, v: Value| proto::KeyValue {
        key,
        value: Some(proto::AnyValue { value: Some(v) }),
    };
    let span = |span: SpanData| {
        let mut attributes: Vec<proto::KeyValue> = Vec::new();
        for (k, v) in span.attributes.into_iter().rev() {
            if !attributes.iter().any(|kv| kv.key == k) {
                attributes.push(key_value(k.into_owned(), value(v)));
            }
        }
        attributes.reverse();
        proto::Span {
            trace_id: span.trace_id.to_vec(),
            span_id: span.span_id.to_vec(),
            trace_state: span.trace_state.as_deref().unwrap_or("").to_string(),
            parent_span_id: span.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
            name: span.name,
            kind: proto::SPAN_KIND_INTERNAL,
            start_time_unix_nano: span.start_time_unix_nano,
            end_time_unix_nano: span.end_time_unix_nano,
            attributes,
            status: Some(proto::Status {
                message: match span.status.code {
                    StatusCode::Error => span.status.message.unwrap_or_default(),
                    _ => String::new(),
                },
                code: span.status.code as i32,
            }),
            flags: proto::SPAN_FLAGS_SAMPLED_LOCAL_PARENT
                | if span.parent_is_remote {
                    proto::SPAN_FLAGS_REMOTE_PARENT
                } else {
                    0
                },
        }
    };
    proto::ExportTraceServiceRequest {
        resource_spans: vec![proto::ResourceSpans {
            resource: Some(proto::Resource {
                attributes: config
                    .resource_attributes
                    .iter()
                    .map(|(k, v)| key_value(k.clone(), Value::StringValue(v.clone())))
                    .collect(),
            }),
            scope_spans: vec![proto::ScopeSpans {
                scope: Some(proto::InstrumentationScope {
                    name: SDK_NAME.to_string(),
                    version: SDK_VERSION.to_string(),
                }),
                spans: spans.into_iter().map(span).collect(),
            }],
        }],
    }
    .encode_to_vec()
}

/// Every kind of value, deferred ones between the others, a key set twice,
/// an empty key and an empty string array, status and flags variants.
fn varied() -> Vec<SpanData> {
    let deferred = |t: &'static str| AttributeValue::Deferred(Arc::new(Rendered(t)));
    let mut a = span("chat gemini-2.5-flash");
    a.attributes
        .insert(1, ("gen_ai.input.messages".into(), deferred("héllo wörld")));
    a.attributes
        .push(("gen_ai.output.messages".into(), deferred("")));
    a.attributes
        .push(("gen_ai.usage.input_tokens".into(), AttributeValue::Int(-7)));
    a.attributes.push(("".into(), AttributeValue::Bool(false)));
    a.attributes
        .push(("weave.flag".into(), AttributeValue::Bool(true)));
    a.attributes
        .push(("empty".into(), AttributeValue::StringArray(vec![])));
    a.attributes
        .push(("big".into(), AttributeValue::Int(i64::MAX)));
    a.attributes
        .push(("zero".into(), AttributeValue::Double(0.0)));
    a.attributes
        .push(("long".into(), AttributeValue::String("ü".repeat(300))));
    a.trace_state = Some(Arc::from("vendor=x,other=y"));
    a.parent_is_remote = true;
    let mut b = error_span("execute_tool get_weather");
    b.attributes
        .push(("gen_ai.tool.call.result".into(), deferred("only")));
    let mut c = span("");
    c.attributes.clear();
    c.start_time_unix_nano = 0;
    c.end_time_unix_nano = 0;
    c.status = Status {
        code: StatusCode::Ok,
        message: Some("not sent: only ERROR has one".into()),
    };
    let mut d = error_span("invoke_agent root");
    d.status.message = None;
    vec![a, b, c, d]
}

#[test]
fn prepared_spans_encode_as_the_generated_types_do() {
    let mut c = OtlpConfig::with_endpoint("http://x/v1/traces");
    c.resource_attributes
        .push(("deployment.environment".into(), "test".into()));
    let mut encoder = Encoder::new(&c);
    let spans = varied();
    assert_eq!(
        encoder.raw(&encoder.prepare(spans.clone())),
        reference(&c, spans.clone())
    );
    // The same encoder again (its buffers kept), a span without deferred
    // attributes now between two with them.
    let mixed: Vec<SpanData> = [2, 0, 3, 1].iter().map(|&i| spans[i].clone()).collect();
    assert_eq!(
        encoder.raw(&encoder.prepare(mixed.clone())),
        reference(&c, mixed),
        "mixed"
    );
}

#[test]
fn an_empty_batch_is_an_empty_scope() {
    let c = OtlpConfig::with_endpoint("http://x/v1/traces");
    let mut encoder = Encoder::new(&c);
    assert_eq!(encoder.raw(&[]), reference(&c, Vec::new()));
}
