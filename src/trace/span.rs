//! A finished span as the exporters receive it. This is the boundary between
//! the span model (`trace`) and the exporters (`export`): keep it stable.

use std::sync::Arc;

/// OpenTelemetry status codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusCode {
    Unset = 0,
    Ok = 1,
    Error = 2,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub code: StatusCode,
    pub message: Option<String>,
}

impl Default for Status {
    fn default() -> Self {
        Status {
            code: StatusCode::Unset,
            message: None,
        }
    }
}

/// JSON captured on the JavaScript thread as-is and turned into its final
/// shape only where it is needed (the exporter thread, or `getFinishedSpans`),
/// so big conversation histories cost the JavaScript thread one copy.
pub trait DeferredValue: Send + Sync + std::fmt::Debug {
    /// The attribute's final string value.
    fn render(&self) -> String;
}

#[derive(Clone, Debug)]
pub enum AttributeValue {
    String(String),
    Int(i64),
    Double(f64),
    Bool(bool),
    StringArray(Vec<String>),
    /// A string attribute whose value is computed on first use.
    Deferred(Arc<dyn DeferredValue>),
}

impl AttributeValue {
    /// The string form of a string-like value (rendering a deferred one).
    pub fn as_string(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            AttributeValue::String(s) => Some(std::borrow::Cow::Borrowed(s)),
            AttributeValue::Deferred(d) => Some(std::borrow::Cow::Owned(d.render())),
            _ => None,
        }
    }
}

/// An attribute's key: the span model's are all constants, so a span's
/// dozen keys cost no allocation (nor a free on the exporter thread).
pub type AttributeKey = std::borrow::Cow<'static, str>;

#[derive(Clone, Debug)]
pub struct SpanData {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent_span_id: Option<[u8; 8]>,
    pub name: String,
    pub start_time_unix_nano: u64,
    pub end_time_unix_nano: u64,
    /// In the order they were set; a key set twice keeps its last value.
    pub attributes: Vec<(AttributeKey, AttributeValue)>,
    pub status: Status,
    /// The parent is a span from outside this tracer (the application's
    /// span a run joined): the top of what this tracer records of the
    /// trace, like a root.
    pub remote_parent: bool,
    /// That parent came from another process (OTLP span flag IS_REMOTE).
    pub parent_is_remote: bool,
    /// The W3C tracestate of the trace this span joined, if any.
    pub trace_state: Option<Arc<str>>,
}

impl SpanData {
    /// A span with only a name and times (the exporters' tests).
    #[cfg(test)]
    pub fn bare(name: &str, start: u64, end: u64) -> SpanData {
        SpanData {
            trace_id: [1; 16],
            span_id: [2; 8],
            parent_span_id: None,
            name: name.into(),
            start_time_unix_nano: start,
            end_time_unix_nano: end,
            attributes: Vec::new(),
            status: Status::default(),
            remote_parent: false,
            parent_is_remote: false,
            trace_state: None,
        }
    }

    pub fn attribute(&self, key: &str) -> Option<&AttributeValue> {
        self.attributes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
}

/// Wall-clock time in Unix nanoseconds, the unit of every span time: the
/// time of the callback being applied (`at_time`), else the clock's.
pub fn now_nanos() -> u64 {
    match CALLBACK_TIME.get() {
        0 => clock_nanos(),
        t => t,
    }
}

/// The system clock in Unix nanoseconds.
pub fn clock_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

thread_local! {
    /// Set while a callback recorded earlier is applied (0: none).
    static CALLBACK_TIME: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Runs `f` with `now_nanos` answering `t`: the callbacks are recorded by
/// JavaScript with their time and applied later, together
/// (src/js/tracing/records.rs), and every span time is the callback's.
pub fn at_time<T>(t: u64, f: impl FnOnce() -> T) -> T {
    struct Reset(u64);
    impl Drop for Reset {
        fn drop(&mut self) {
            CALLBACK_TIME.set(self.0);
        }
    }
    let _reset = Reset(CALLBACK_TIME.replace(t.max(1)));
    f()
}
