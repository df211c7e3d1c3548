//! Prepared spans → the OTLP request body (protobuf, optionally gzipped).
//! Runs on the exporter thread: this is where deferred attribute values are
//! rendered.

use super::gzip::Gzip;
use super::prepared::PreparedSpan;
use super::proto::{self, any_value::Value};
use super::wire::{bytes_field, len_field_size, len_header};
use crate::export::config::{OtlpConfig, SDK_NAME, SDK_VERSION};
use prost::Message;

/// A request body, and whether it is gzipped (its Content-Encoding).
pub struct Body {
    pub bytes: Vec<u8>,
    pub gzipped: bool,
}

pub struct Encoder {
    /// `ResourceSpans.resource` and `ScopeSpans.scope`, encoded once.
    resource: Vec<u8>,
    scope: Vec<u8>,
    limit: Option<usize>,
    /// The deflate state, kept from body to body; none: bodies go plain.
    gzip: Option<Gzip>,
}

// Field numbers of the request envelope.
const REQUEST_RESOURCE_SPANS: u32 = 1;
const RESOURCE_SPANS_RESOURCE: u32 = 1;
const RESOURCE_SPANS_SCOPE_SPANS: u32 = 2;
const SCOPE_SPANS_SCOPE: u32 = 1;
const SCOPE_SPANS_SPANS: u32 = 2;

impl Encoder {
    pub fn new(config: &OtlpConfig) -> Self {
        let attributes = config
            .resource_attributes
            .iter()
            .map(|(k, v)| proto::KeyValue {
                key: k.clone(),
                value: Some(proto::AnyValue {
                    value: Some(Value::StringValue(v.clone())),
                }),
            })
            .collect();
        let scope = proto::InstrumentationScope {
            name: SDK_NAME.to_string(),
            version: SDK_VERSION.to_string(),
        };
        Encoder {
            resource: proto::Resource { attributes }.encode_to_vec(),
            scope: scope.encode_to_vec(),
            limit: config.attribute_value_length_limit,
            gzip: config.gzip.then(Gzip::new),
        }
    }

    /// The ExportTraceServiceRequest for `spans`: one ResourceSpans with one
    /// ScopeSpans holding them (their deferred attributes rendered now).
    pub fn raw(&self, spans: &[PreparedSpan]) -> Vec<u8> {
        let mut encoded = Vec::new();
        for span in spans {
            span.write(SCOPE_SPANS_SPANS, self.limit, &mut encoded);
        }
        let scope_spans = len_field_size(self.scope.len()) + encoded.len();
        let resource_spans = len_field_size(self.resource.len()) + len_field_size(scope_spans);
        let mut out = Vec::with_capacity(len_field_size(resource_spans));
        len_header(&mut out, REQUEST_RESOURCE_SPANS, resource_spans);
        bytes_field(&mut out, RESOURCE_SPANS_RESOURCE, &self.resource);
        len_header(&mut out, RESOURCE_SPANS_SCOPE_SPANS, scope_spans);
        bytes_field(&mut out, SCOPE_SPANS_SCOPE, &self.scope);
        out.extend_from_slice(&encoded);
        out
    }

    /// The HTTP body for `spans`: protobuf, gzipped when configured.
    pub fn body(&mut self, spans: &[PreparedSpan]) -> Body {
        let raw = self.raw(spans);
        // Deflate into a Vec fails only on a broken state: that body goes
        // plain, and says so.
        match self.gzip.as_mut().map(|gzip| gzip.zip(&raw)) {
            Some(Some(bytes)) => Body {
                bytes,
                gzipped: true,
            },
            _ => Body {
                bytes: raw,
                gzipped: false,
            },
        }
    }

    /// `spans` prepared as `on_end` prepares them (tests and figures).
    #[cfg(test)]
    pub fn prepare(&self, spans: Vec<crate::trace::span::SpanData>) -> Vec<PreparedSpan> {
        spans
            .into_iter()
            .map(|s| PreparedSpan::new(s, self.limit))
            .collect()
    }
}

/// Spans the collector rejected, with its message, from a 2xx answer body.
pub fn partial_success(body: &[u8]) -> Option<(i64, String)> {
    let response = proto::ExportTraceServiceResponse::decode(body).ok()?;
    let p = response.partial_success?;
    (p.rejected_spans > 0 || !p.error_message.is_empty())
        .then_some((p.rejected_spans, p.error_message))
}
