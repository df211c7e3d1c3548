//! The OTLP exporter against a real loopback HTTP receiver.

mod collector;
mod delivery;
mod encoding;
mod figures;
mod prepared;

use super::OtlpSink;
use crate::export::config::OtlpConfig;
use crate::trace::span::{AttributeValue, DeferredValue, SpanData, Status, StatusCode};
use collector::Received;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use std::io::Read;
use std::sync::Arc;

/// Fast settings: exports happen on flush (or a full batch), retries are quick.
fn config(endpoint: &str) -> OtlpConfig {
    let mut c = OtlpConfig::with_endpoint(endpoint);
    c.scheduled_delay_millis = 60_000;
    c.export_timeout_millis = 5_000;
    c.request_timeout_millis = 2_000;
    c.retry_initial_backoff_millis = 20;
    c.retry_max_backoff_millis = 100;
    c
}

fn start(c: OtlpConfig) -> OtlpSink {
    OtlpSink::start(c).expect("sink starts")
}

#[derive(Debug)]
struct Rendered(&'static str);

impl DeferredValue for Rendered {
    fn render(&self) -> String {
        format!("[{{\"role\":\"user\",\"content\":\"{}\"}}]", self.0)
    }
}

fn span(name: &str) -> SpanData {
    SpanData {
        trace_id: [0xab; 16],
        span_id: [0x01, 2, 3, 4, 5, 6, 7, 8],
        parent_span_id: Some([9; 8]),
        name: name.to_string(),
        start_time_unix_nano: 1_700_000_000_000_000_000,
        end_time_unix_nano: 1_700_000_000_500_000_000,
        attributes: vec![
            (
                "gen_ai.operation.name".into(),
                AttributeValue::String("chat".into()),
            ),
            ("gen_ai.usage.input_tokens".into(), AttributeValue::Int(42)),
            (
                "gen_ai.request.temperature".into(),
                AttributeValue::Double(0.5),
            ),
            (
                "weave.google_adk.interrupted".into(),
                AttributeValue::Bool(true),
            ),
            (
                "gen_ai.response.finish_reasons".into(),
                AttributeValue::StringArray(vec!["stop".into()]),
            ),
            (
                "gen_ai.input.messages".into(),
                AttributeValue::Deferred(Arc::new(Rendered("hi"))),
            ),
        ],
        status: Status::default(),
        remote_parent: false,
        parent_is_remote: false,
        trace_state: None,
    }
}

fn error_span(name: &str) -> SpanData {
    let mut s = span(name);
    s.parent_span_id = None;
    s.status = Status {
        code: StatusCode::Error,
        message: Some("tool failed".into()),
    };
    s
}

/// The request a receiver got: gunzipped when marked so, then decoded with
/// opentelemetry-proto's generated types (not ours).
fn decode(r: &Received) -> ExportTraceServiceRequest {
    let bytes = if r.header("content-encoding") == Some("gzip") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&r.body[..])
            .read_to_end(&mut out)
            .expect("gzip body");
        out
    } else {
        r.body.clone()
    };
    ExportTraceServiceRequest::decode(&bytes[..]).expect("protobuf body")
}

fn span_names(requests: &[Received]) -> Vec<String> {
    requests
        .iter()
        .flat_map(|r| {
            decode(r)
                .resource_spans
                .into_iter()
                .flat_map(|rs| rs.scope_spans)
                .flat_map(|ss| ss.spans)
                .map(|s| s.name)
        })
        .collect()
}
