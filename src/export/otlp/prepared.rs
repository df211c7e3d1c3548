//! A span made OTLP protobuf on the thread the span model runs on, in
//! `on_end`, except for its deferred attributes (conversation JSON), which
//! the exporter thread renders and splices in where they belong.
//!
//! Why there and not on the exporter thread: a span is a few dozen small
//! allocations (names, keys, values). Handed to the exporter thread, each was
//! freed there and came back to the span model thread's allocator cold (the
//! other core's cache), costing that thread more than copying the bytes once
//! costs now. Encoded there, they are freed where they were made; what
//! crosses is one buffer and the deferred values.

use super::proto;
use super::wire::{
    bytes_field, bytes_field_if_any, fixed32_field, fixed64_field, len_field_size, len_header, tag,
    varint_field, varint_len, FIXED64, TAG_LEN,
};
use crate::trace::span::{AttributeKey, AttributeValue, DeferredValue, SpanData, StatusCode};
use std::sync::Arc;

// Field numbers of opentelemetry.proto.trace.v1.Span and its parts.
const SPAN_TRACE_ID: u32 = 1;
const SPAN_SPAN_ID: u32 = 2;
const SPAN_TRACE_STATE: u32 = 3;
const SPAN_PARENT_SPAN_ID: u32 = 4;
const SPAN_NAME: u32 = 5;
const SPAN_KIND: u32 = 6;
const SPAN_START: u32 = 7;
const SPAN_END: u32 = 8;
const SPAN_ATTRIBUTES: u32 = 9;
const SPAN_STATUS: u32 = 15;
const SPAN_FLAGS: u32 = 16;
const STATUS_MESSAGE: u32 = 2;
const STATUS_CODE: u32 = 3;
const KEY_VALUE_KEY: u32 = 1;
const KEY_VALUE_VALUE: u32 = 2;
const ANY_STRING: u32 = 1;
const ANY_BOOL: u32 = 2;
const ANY_INT: u32 = 3;
const ANY_DOUBLE: u32 = 4;
const ANY_ARRAY: u32 = 5;
const ARRAY_VALUES: u32 = 1;

/// A deferred attribute: where it goes among the encoded fields, its key
/// and value.
type Splice = (usize, AttributeKey, Arc<dyn DeferredValue>);

/// One span's Span message fields, deferred attributes left out.
pub struct PreparedSpan {
    fields: Vec<u8>,
    deferred: Vec<Splice>,
}

impl PreparedSpan {
    /// Encodes `span` (its values already cut to the attribute value
    /// length limit, by the span model).
    pub fn new(span: SpanData) -> Self {
        let mut out = Vec::with_capacity(256 + 64 * span.attributes.len());
        bytes_field(&mut out, SPAN_TRACE_ID, &span.trace_id);
        bytes_field(&mut out, SPAN_SPAN_ID, &span.span_id);
        bytes_field_if_any(
            &mut out,
            SPAN_TRACE_STATE,
            span.trace_state.as_deref().unwrap_or("").as_bytes(),
        );
        if let Some(parent) = &span.parent_span_id {
            bytes_field(&mut out, SPAN_PARENT_SPAN_ID, parent);
        }
        bytes_field_if_any(&mut out, SPAN_NAME, span.name.as_bytes());
        varint_field(&mut out, SPAN_KIND, proto::SPAN_KIND_INTERNAL as u64);
        if span.start_time_unix_nano != 0 {
            fixed64_field(&mut out, SPAN_START, span.start_time_unix_nano);
        }
        if span.end_time_unix_nano != 0 {
            fixed64_field(&mut out, SPAN_END, span.end_time_unix_nano);
        }
        let mut deferred = Vec::new();
        let attributes = span.attributes;
        for (i, (key, value)) in attributes.iter().enumerate() {
            // A key set twice keeps its last value, at the last place.
            if attributes[i + 1..].iter().any(|(k, _)| k == key) {
                continue;
            }
            match value {
                AttributeValue::Deferred(d) => {
                    deferred.push((out.len(), key.clone(), Arc::clone(d)));
                }
                other => key_value(&mut out, key, &Value::of(other)),
            }
        }
        // OTLP: a description only accompanies ERROR.
        let message = match span.status.code {
            StatusCode::Error => span.status.message.as_deref().unwrap_or(""),
            _ => "",
        };
        let code = span.status.code as u64;
        let status_len = if message.is_empty() {
            0
        } else {
            len_field_size(message.len())
        } + if code == 0 {
            0
        } else {
            TAG_LEN + varint_len(code)
        };
        len_header(&mut out, SPAN_STATUS, status_len);
        bytes_field_if_any(&mut out, STATUS_MESSAGE, message.as_bytes());
        if code != 0 {
            varint_field(&mut out, STATUS_CODE, code);
        }
        let flags = proto::SPAN_FLAGS_SAMPLED_LOCAL_PARENT
            | if span.parent_is_remote {
                proto::SPAN_FLAGS_REMOTE_PARENT
            } else {
                0
            };
        fixed32_field(&mut out, SPAN_FLAGS, flags);
        PreparedSpan {
            fields: out,
            deferred,
        }
    }

    /// Renders the span's deferred attributes as KeyValue fields onto
    /// `rendered` (the exporter thread's part), pushing where each ends;
    /// returns the length of the whole Span message.
    pub fn render(&self, rendered: &mut Vec<u8>, ends: &mut Vec<usize>) -> usize {
        let from = rendered.len();
        for (_, key, value) in &self.deferred {
            let text = value.render();
            key_value(rendered, key, &Value::Str(&text));
            ends.push(rendered.len());
        }
        self.fields.len() + rendered.len() - from
    }

    /// Writes the span, `len` long (from `render`), as length-delimited
    /// field `field` of `out`: its fields with its rendered attributes
    /// (`rendered[from..]`, ending at `ends`) spliced in where they belong.
    pub fn write(
        &self,
        field: u32,
        len: usize,
        rendered: &[u8],
        ends: &[usize],
        from: usize,
        out: &mut Vec<u8>,
    ) {
        len_header(out, field, len);
        let mut at = 0;
        let mut from = from;
        for ((offset, _, _), &end) in self.deferred.iter().zip(ends) {
            out.extend_from_slice(&self.fields[at..*offset]);
            out.extend_from_slice(&rendered[from..end]);
            at = *offset;
            from = end;
        }
        out.extend_from_slice(&self.fields[at..]);
    }

    /// How many deferred attributes `render` renders.
    pub fn deferred_count(&self) -> usize {
        self.deferred.len()
    }
}

/// An attribute value as it goes on the wire (strings already cut).
enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Double(f64),
    Array(Vec<&'a str>),
}

impl<'a> Value<'a> {
    fn of(value: &'a AttributeValue) -> Value<'a> {
        match value {
            AttributeValue::String(s) => Value::Str(s),
            AttributeValue::Int(i) => Value::Int(*i),
            AttributeValue::Double(d) => Value::Double(*d),
            AttributeValue::Bool(b) => Value::Bool(*b),
            AttributeValue::StringArray(items) => {
                Value::Array(items.iter().map(String::as_str).collect())
            }
            // Rendered on the exporter thread; never encoded from here.
            AttributeValue::Deferred(_) => Value::Str(""),
        }
    }

    /// Size of the AnyValue message.
    fn any_len(&self) -> usize {
        match self {
            Value::Str(s) => len_field_size(s.len()),
            Value::Bool(_) => TAG_LEN + 1,
            Value::Int(i) => TAG_LEN + varint_len(*i as u64),
            Value::Double(_) => TAG_LEN + 8,
            Value::Array(items) => len_field_size(array_len(items)),
        }
    }

    fn write_any(&self, out: &mut Vec<u8>) {
        match self {
            Value::Str(s) => bytes_field(out, ANY_STRING, s.as_bytes()),
            Value::Bool(b) => varint_field(out, ANY_BOOL, u64::from(*b)),
            Value::Int(i) => varint_field(out, ANY_INT, *i as u64),
            Value::Double(d) => {
                tag(out, ANY_DOUBLE, FIXED64);
                out.extend_from_slice(&d.to_bits().to_le_bytes());
            }
            Value::Array(items) => {
                len_header(out, ANY_ARRAY, array_len(items));
                for s in items {
                    len_header(out, ARRAY_VALUES, len_field_size(s.len()));
                    bytes_field(out, ANY_STRING, s.as_bytes());
                }
            }
        }
    }
}

/// Size of an ArrayValue of strings.
fn array_len(items: &[&str]) -> usize {
    items
        .iter()
        .map(|s| len_field_size(len_field_size(s.len())))
        .sum()
}

/// Writes one KeyValue as attribute field of a Span.
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value<'_>) {
    let any = value.any_len();
    let kv = if key.is_empty() {
        0
    } else {
        len_field_size(key.len())
    } + len_field_size(any);
    len_header(out, SPAN_ATTRIBUTES, kv);
    bytes_field_if_any(out, KEY_VALUE_KEY, key.as_bytes());
    len_header(out, KEY_VALUE_VALUE, any);
    value.write_any(out);
}
