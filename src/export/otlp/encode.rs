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
    /// The deflate state, kept from body to body; none: bodies go plain.
    gzip: Option<Gzip>,
    scratch: Scratch,
}

/// Buffers a body is built in, kept from body to body (up to `KEEP_BYTES`
/// each) so that building one allocates nothing once they have grown.
#[derive(Default)]
struct Scratch {
    /// The spans' rendered deferred attributes, back to back.
    rendered: Vec<u8>,
    /// Where each rendered attribute ends in `rendered`.
    ends: Vec<usize>,
    /// Each span's encoded length.
    lens: Vec<usize>,
    /// The protobuf request, when it is gzipped from here.
    raw: Vec<u8>,
    /// The last body's buffer, back from `recycle`: a new one per body was
    /// freshly mapped memory each time (a plain body of 512 spans is about
    /// half a MiB), and the page faults on filling it were a tenth of the
    /// exporter thread's time.
    body: Vec<u8>,
}

/// A bigger scratch buffer (a batch of long conversations) is let go after
/// its body: memory stays bounded by the usual batch, not the largest.
const KEEP_BYTES: usize = 4 << 20;

fn keep_small<T>(buffer: &mut Vec<T>) {
    if buffer.capacity() * std::mem::size_of::<T>() > KEEP_BYTES {
        *buffer = Vec::new();
    }
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
            gzip: config.gzip.then(Gzip::new),
            scratch: Scratch::default(),
        }
    }

    /// The ExportTraceServiceRequest for `spans`: one ResourceSpans with one
    /// ScopeSpans holding them (their deferred attributes rendered now), in
    /// a buffer of its own (tests and figures; `body` builds in a kept one).
    #[cfg(test)]
    pub fn raw(&mut self, spans: &[PreparedSpan]) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_request(spans, &mut out);
        out
    }

    /// Writes the request for `spans` onto `out` (cleared first), sized
    /// before it is written: the spans are copied once, into place.
    fn write_request(&mut self, spans: &[PreparedSpan], out: &mut Vec<u8>) {
        let Scratch {
            rendered,
            ends,
            lens,
            ..
        } = &mut self.scratch;
        rendered.clear();
        ends.clear();
        lens.clear();
        let mut encoded = 0;
        for span in spans {
            let len = span.render(rendered, ends);
            encoded += len_field_size(len);
            lens.push(len);
        }
        let scope_spans = len_field_size(self.scope.len()) + encoded;
        let resource_spans = len_field_size(self.resource.len()) + len_field_size(scope_spans);
        out.clear();
        out.reserve_exact(len_field_size(resource_spans));
        len_header(out, REQUEST_RESOURCE_SPANS, resource_spans);
        bytes_field(out, RESOURCE_SPANS_RESOURCE, &self.resource);
        len_header(out, RESOURCE_SPANS_SCOPE_SPANS, scope_spans);
        bytes_field(out, SCOPE_SPANS_SCOPE, &self.scope);
        let (mut from, mut first_end) = (0, 0);
        for (span, &len) in spans.iter().zip(lens.iter()) {
            let count = span.deferred_count();
            let span_ends = &ends[first_end..first_end + count];
            span.write(SCOPE_SPANS_SPANS, len, rendered, span_ends, from, out);
            from = span_ends.last().copied().unwrap_or(from);
            first_end += count;
        }
        keep_small(rendered);
        keep_small(ends);
        keep_small(lens);
    }

    /// The HTTP body for `spans`: protobuf, gzipped when configured.
    pub fn body(&mut self, spans: &[PreparedSpan]) -> Body {
        let mut bytes = std::mem::take(&mut self.scratch.body);
        if self.gzip.is_none() {
            self.write_request(spans, &mut bytes);
            return Body {
                bytes,
                gzipped: false,
            };
        }
        let mut raw = std::mem::take(&mut self.scratch.raw);
        self.write_request(spans, &mut raw);
        // Deflate into a Vec fails only on a broken state: that body goes
        // plain, and says so.
        let zipped = self
            .gzip
            .as_mut()
            .is_some_and(|gzip| gzip.zip(&raw, &mut bytes));
        if !zipped {
            bytes.clear();
            bytes.extend_from_slice(&raw);
        }
        keep_small(&mut raw);
        self.scratch.raw = raw;
        Body {
            bytes,
            gzipped: zipped,
        }
    }

    /// Takes back a body's buffer once it was sent (or given up on).
    pub fn recycle(&mut self, body: Body) {
        let mut bytes = body.bytes;
        bytes.clear();
        keep_small(&mut bytes);
        self.scratch.body = bytes;
    }

    /// `spans` prepared as `on_end` prepares them (tests and figures).
    #[cfg(test)]
    pub fn prepare(&self, spans: Vec<crate::trace::span::SpanData>) -> Vec<PreparedSpan> {
        spans.into_iter().map(PreparedSpan::new).collect()
    }
}

/// Spans the collector rejected, with its message, from a 2xx answer body.
pub fn partial_success(body: &[u8]) -> Option<(i64, String)> {
    let response = proto::ExportTraceServiceResponse::decode(body).ok()?;
    let p = response.partial_success?;
    (p.rejected_spans > 0 || !p.error_message.is_empty())
        .then_some((p.rejected_spans, p.error_message))
}
