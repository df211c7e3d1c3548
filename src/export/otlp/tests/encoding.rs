//! What goes on the wire, decoded with opentelemetry-proto.

use super::*;
use crate::export::otlp::encode::{partial_success, Encoder};
use crate::export::otlp::proto;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn roundtrip(c: &OtlpConfig, spans: &[SpanData]) -> ExportTraceServiceRequest {
    let mut encoder = Encoder::new(c);
    let bytes = encoder.raw(&encoder.prepare(spans.to_vec()));
    ExportTraceServiceRequest::decode(&bytes[..]).expect("decodes with the official types")
}

#[test]
fn spans_decode_with_the_official_types() {
    let c = OtlpConfig::with_endpoint("http://x/v1/traces");
    let req = roundtrip(&c, &[span("chat gemini"), error_span("invoke_agent root")]);
    assert_eq!(req.resource_spans.len(), 1);
    let rs = &req.resource_spans[0];
    let resource = rs.resource.as_ref().expect("resource");
    assert_eq!(
        attr(&resource.attributes, "telemetry.sdk.name"),
        Some(&Value::StringValue("adk-native-plugins".into()))
    );
    assert_eq!(
        attr(&resource.attributes, "service.name"),
        Some(&Value::StringValue("unknown_service:node".into()))
    );
    assert_eq!(rs.scope_spans.len(), 1);
    let scope = rs.scope_spans[0].scope.as_ref().expect("scope");
    assert_eq!(scope.name, "adk-native-plugins");
    assert_eq!(scope.version, env!("CARGO_PKG_VERSION"));
    let spans = &rs.scope_spans[0].spans;
    assert_eq!(spans.len(), 2);
    let s = &spans[0];
    assert_eq!(s.trace_id, vec![0xab; 16]);
    assert_eq!(s.span_id, vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(s.parent_span_id, vec![9; 8]);
    assert_eq!(s.name, "chat gemini");
    assert_eq!(s.kind, 1, "INTERNAL");
    assert_eq!(s.start_time_unix_nano, 1_700_000_000_000_000_000);
    assert_eq!(s.end_time_unix_nano, 1_700_000_000_500_000_000);
    assert_eq!(s.flags & 0x1, 1, "sampled");
    assert_eq!(
        attr(&s.attributes, "gen_ai.operation.name"),
        Some(&Value::StringValue("chat".into()))
    );
    assert_eq!(
        attr(&s.attributes, "gen_ai.usage.input_tokens"),
        Some(&Value::IntValue(42))
    );
    assert_eq!(
        attr(&s.attributes, "gen_ai.request.temperature"),
        Some(&Value::DoubleValue(0.5))
    );
    assert_eq!(
        attr(&s.attributes, "weave.google_adk.interrupted"),
        Some(&Value::BoolValue(true))
    );
    match attr(&s.attributes, "gen_ai.response.finish_reasons") {
        Some(Value::ArrayValue(a)) => {
            assert_eq!(a.values[0].value, Some(Value::StringValue("stop".into())))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        attr(&s.attributes, "gen_ai.input.messages"),
        Some(&Value::StringValue(
            "[{\"role\":\"user\",\"content\":\"hi\"}]".into()
        ))
    );
    let status = s.status.as_ref().expect("status");
    assert_eq!((status.code, status.message.as_str()), (0, ""));
    let root = &spans[1];
    assert!(root.parent_span_id.is_empty());
    let status = root.status.as_ref().expect("status");
    assert_eq!((status.code, status.message.as_str()), (2, "tool failed"));
}

#[test]
fn parent_locality_and_tracestate_reach_the_wire() {
    let c = OtlpConfig::with_endpoint("http://x/v1/traces");
    let mut joined = span("invoke_agent root");
    joined.remote_parent = true;
    joined.parent_is_remote = true;
    joined.trace_state = Some("vendor=abc".into());
    let req = roundtrip(&c, &[span("chat gemini"), joined]);
    let spans = &req.resource_spans[0].scope_spans[0].spans;
    // SpanFlags: sampled, CONTEXT_HAS_IS_REMOTE, and CONTEXT_IS_REMOTE
    // only where the parent came from another process.
    assert_eq!(spans[0].flags, 0x101);
    assert_eq!(spans[0].trace_state, "");
    assert_eq!(spans[1].flags, 0x301);
    assert_eq!(spans[1].trace_state, "vendor=abc");
}

#[test]
fn a_key_set_twice_keeps_its_last_value_in_first_position() {
    let mut s = span("x");
    s.attributes = vec![
        ("a".into(), AttributeValue::Int(1)),
        ("b".into(), AttributeValue::Int(2)),
        ("a".into(), AttributeValue::Int(3)),
    ];
    let req = roundtrip(&OtlpConfig::with_endpoint("http://x/"), &[s]);
    let attrs = &req.resource_spans[0].scope_spans[0].spans[0].attributes;
    let keys: Vec<&str> = attrs.iter().map(|kv| kv.key.as_str()).collect();
    assert_eq!(keys, vec!["b", "a"]);
    assert_eq!(attr(attrs, "a"), Some(&Value::IntValue(3)));
}

fn gunzip(zipped: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(zipped)
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

#[test]
fn gzip_body_inflates_to_the_protobuf() {
    let c = OtlpConfig::with_endpoint("http://x/");
    let mut encoder = Encoder::new(&c);
    let spans: Vec<SpanData> = (0..50).map(|i| span(&format!("s{i}"))).collect();
    let prepared = encoder.prepare(spans.clone());
    let body = encoder.body(&prepared);
    assert!(body.gzipped);
    let zipped = body.bytes;
    let raw = encoder.raw(&encoder.prepare(spans.clone()));
    assert!(
        zipped.len() * 3 < raw.len(),
        "{} vs {}",
        zipped.len(),
        raw.len()
    );
    assert_eq!(gunzip(&zipped), raw);
    let mut plain = c.clone();
    plain.gzip = false;
    let mut plain = Encoder::new(&plain);
    let prepared = plain.prepare(spans);
    let body = plain.body(&prepared);
    assert!(!body.gzipped);
    assert_eq!(body.bytes, raw);
}

#[test]
fn the_kept_deflate_state_starts_each_body_afresh() {
    let c = OtlpConfig::with_endpoint("http://x/");
    let mut encoder = Encoder::new(&c);
    // Bodies of different sizes, one past several output reservations,
    // and none at all: each must inflate alone to its own protobuf.
    for n in [50, 1, 0, 2000, 3] {
        let spans: Vec<SpanData> = (0..n).map(|i| span(&format!("span {i} of {n}"))).collect();
        let prepared = encoder.prepare(spans.clone());
        let body = encoder.body(&prepared);
        assert!(body.gzipped);
        assert_eq!(
            gunzip(&body.bytes),
            encoder.raw(&encoder.prepare(spans)),
            "{n} spans"
        );
    }
}

#[test]
fn partial_success_is_read_from_the_answer() {
    let answer = proto::ExportTraceServiceResponse {
        partial_success: Some(proto::ExportTracePartialSuccess {
            rejected_spans: 2,
            error_message: "too big".into(),
        }),
    }
    .encode_to_vec();
    assert_eq!(partial_success(&answer), Some((2, "too big".to_string())));
    assert_eq!(partial_success(&[]), None);
    assert_eq!(partial_success(b"not protobuf \xff\xff"), None);
}

#[test]
fn recycled_body_buffers_carry_nothing_into_the_next_body() {
    for gzip in [false, true] {
        let mut c = OtlpConfig::with_endpoint("http://x/");
        c.gzip = gzip;
        let mut encoder = Encoder::new(&c);
        let mut last_buffer = None;
        for n in [200, 3, 0, 50, 1] {
            let spans: Vec<SpanData> = (0..n).map(|i| span(&format!("span {i} of {n}"))).collect();
            let prepared = encoder.prepare(spans.clone());
            let body = encoder.body(&prepared);
            assert_eq!(body.gzipped, gzip);
            let want = encoder.raw(&encoder.prepare(spans));
            let got = if gzip {
                gunzip(&body.bytes)
            } else {
                body.bytes.clone()
            };
            assert_eq!(got, want, "gzip {gzip}, {n} spans");
            if let Some(ptr) = last_buffer {
                // Smaller than the first body: built in the same allocation.
                assert_eq!(body.bytes.as_ptr(), ptr, "gzip {gzip}, {n} spans");
            }
            last_buffer.get_or_insert(body.bytes.as_ptr());
            encoder.recycle(body);
        }
    }
}
