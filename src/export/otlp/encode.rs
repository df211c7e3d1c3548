//! SpanData → OTLP protobuf bytes (optionally gzipped). Runs on the exporter
//! thread: this is where deferred attribute values are rendered.

use super::proto::{self, any_value::Value};
use crate::export::config::{OtlpConfig, SDK_NAME, SDK_VERSION};
use crate::trace::span::{AttributeValue, SpanData, StatusCode};
use flate2::write::GzEncoder;
use prost::Message;
use std::io::Write;

pub struct Encoder {
    resource: proto::Resource,
    limit: Option<usize>,
    gzip: bool,
}

impl Encoder {
    pub fn new(config: &OtlpConfig) -> Self {
        let attributes = config
            .resource_attributes
            .iter()
            .map(|(k, v)| key_value(k.clone(), Value::StringValue(v.clone())))
            .collect();
        Encoder {
            resource: proto::Resource { attributes },
            limit: config.attribute_value_length_limit,
            gzip: config.gzip,
        }
    }

    pub fn gzip(&self) -> bool {
        self.gzip
    }

    /// One ResourceSpans with one ScopeSpans holding `spans` (moved in, so
    /// no attribute string is copied).
    pub fn request(&self, spans: Vec<SpanData>) -> proto::ExportTraceServiceRequest {
        proto::ExportTraceServiceRequest {
            resource_spans: vec![proto::ResourceSpans {
                resource: Some(self.resource.clone()),
                scope_spans: vec![proto::ScopeSpans {
                    scope: Some(proto::InstrumentationScope {
                        name: SDK_NAME.to_string(),
                        version: SDK_VERSION.to_string(),
                    }),
                    spans: spans.into_iter().map(|s| self.span(s)).collect(),
                }],
            }],
        }
    }

    /// The HTTP body for `spans`: protobuf, gzipped when configured.
    pub fn body(&self, spans: Vec<SpanData>) -> Vec<u8> {
        let raw = self.request(spans).encode_to_vec();
        if !self.gzip {
            return raw;
        }
        let mut gz = GzEncoder::new(
            Vec::with_capacity(raw.len() / 3),
            flate2::Compression::fast(),
        );
        // Writing into a Vec cannot fail; fall back to the plain bytes if it did.
        match gz.write_all(&raw).and_then(|_| gz.finish()) {
            Ok(zipped) => zipped,
            Err(_) => raw,
        }
    }

    fn span(&self, span: SpanData) -> proto::Span {
        proto::Span {
            trace_id: span.trace_id.to_vec(),
            span_id: span.span_id.to_vec(),
            trace_state: span.trace_state.as_deref().unwrap_or("").to_string(),
            parent_span_id: span.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
            name: span.name,
            kind: proto::SPAN_KIND_INTERNAL,
            start_time_unix_nano: span.start_time_unix_nano,
            end_time_unix_nano: span.end_time_unix_nano,
            attributes: self.attributes(span.attributes),
            status: Some(proto::Status {
                message: match span.status.code {
                    // OTLP: a description only accompanies ERROR.
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
    }

    /// In first-set order; a key set twice keeps its last value. Spans carry
    /// a few dozen attributes at most: a linear scan beats hashing here.
    fn attributes(&self, attrs: Vec<(String, AttributeValue)>) -> Vec<proto::KeyValue> {
        let mut out: Vec<proto::KeyValue> = Vec::with_capacity(attrs.len());
        for (k, v) in attrs.into_iter().rev() {
            if !out.iter().any(|kv| kv.key == k) {
                let value = self.value(v);
                out.push(key_value(k, value));
            }
        }
        out.reverse();
        out
    }

    fn value(&self, v: AttributeValue) -> Value {
        match v {
            AttributeValue::String(s) => Value::StringValue(self.cut(s)),
            AttributeValue::Deferred(d) => Value::StringValue(self.cut(d.render())),
            AttributeValue::Int(i) => Value::IntValue(i),
            AttributeValue::Double(d) => Value::DoubleValue(d),
            AttributeValue::Bool(b) => Value::BoolValue(b),
            AttributeValue::StringArray(items) => Value::ArrayValue(proto::ArrayValue {
                values: items
                    .into_iter()
                    .map(|s| proto::AnyValue {
                        value: Some(Value::StringValue(self.cut(s))),
                    })
                    .collect(),
            }),
        }
    }

    /// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT counts characters, not bytes.
    fn cut(&self, mut s: String) -> String {
        if let Some(limit) = self.limit {
            if let Some((at, _)) = s.char_indices().nth(limit) {
                s.truncate(at);
            }
        }
        s
    }
}

fn key_value(key: String, value: Value) -> proto::KeyValue {
    proto::KeyValue {
        key,
        value: Some(proto::AnyValue { value: Some(value) }),
    }
}

/// Spans the collector rejected, with its message, from a 2xx answer body.
pub fn partial_success(body: &[u8]) -> Option<(i64, String)> {
    let response = proto::ExportTraceServiceResponse::decode(body).ok()?;
    let p = response.partial_success?;
    (p.rejected_spans > 0 || !p.error_message.is_empty())
        .then_some((p.rejected_spans, p.error_message))
}
