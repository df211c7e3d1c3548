//! The napi layer behind lib/tracing.js: the callbacks' records
//! (records.rs) go to the span model (crate::trace) on the tracing thread
//! (worker.rs); `NativeTracer` creates a tracer and answers what must be
//! answered at once.

mod fields;
mod finished;
mod records;
mod registry;
mod sinks;
mod state;
mod system_json;
mod tasks;
mod text;
mod worker;

use crate::export::config::{
    attribute_value_limit, resolve, BatchOptions, ConfigError, ExportOptions, NoExportWarning,
    WeaveOptions, VALUE_LIMIT_VARS,
};
use crate::trace::ids::{from_hex, hex};
use crate::trace::key_text;
use crate::trace::model::{RemoteParent, Tracer};
use crate::trace::sink::SinkWarning;
use napi::bindgen_prelude::{FnArgs, Function, Utf16String};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{Error, JsString, Result, Status};
use napi_derive::napi;
use state::{Answers, TracerState};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use text::key;

#[napi(object)]
pub struct NativeWeaveOptions {
    pub project: String,
    pub api_key: Option<String>,
    pub base_url: Option<String>,
}

#[napi(object)]
pub struct NativeBatchOptions {
    pub max_queue_size: Option<u32>,
    pub max_export_batch_size: Option<u32>,
    pub scheduled_delay_millis: Option<u32>,
    pub export_timeout_millis: Option<u32>,
}

/// The options of `new TracingPlugin(...)`, type-checked by lib/tracing/options.js.
#[napi(object)]
pub struct NativeTracingOptions {
    pub exporter: Option<String>,
    pub endpoint: Option<String>,
    /// `[name, value]` pairs in the user's order.
    pub headers: Option<Vec<Vec<String>>>,
    pub weave: Option<NativeWeaveOptions>,
    pub service_name: Option<String>,
    pub resource_attributes: Option<Vec<Vec<String>>>,
    pub batch: Option<NativeBatchOptions>,
    pub max_open_invocations: Option<u32>,
    /// `process.stdout.isTTY`, for the console exporter's colours.
    pub stdout_is_tty: Option<bool>,
    /// How long process exit waits to deliver this plugin's spans.
    pub exit_flush_timeout_millis: Option<u32>,
    /// A worker thread's own environment (its `process.env`, which a Worker
    /// may be given apart from the process's); none on the main thread,
    /// where the process's environment is read.
    pub environment: Option<HashMap<String, String>>,
}

fn pairs(list: Option<Vec<Vec<String>>>) -> Option<Vec<(String, String)>> {
    list.map(|l| {
        l.into_iter()
            .filter_map(|mut kv| {
                if kv.len() == 2 {
                    let v = kv.pop()?;
                    let k = kv.pop()?;
                    Some((k, v))
                } else {
                    None
                }
            })
            .collect()
    })
}

fn export_options(o: &mut NativeTracingOptions) -> ExportOptions {
    ExportOptions {
        exporter: o.exporter.take(),
        endpoint: o.endpoint.take(),
        headers: pairs(o.headers.take()),
        weave: o.weave.take().map(|w| WeaveOptions {
            project: w.project,
            api_key: w.api_key,
            base_url: w.base_url,
        }),
        service_name: o.service_name.take(),
        resource_attributes: pairs(o.resource_attributes.take()),
        batch: o
            .batch
            .take()
            .map(|b| BatchOptions {
                max_queue_size: b.max_queue_size,
                max_export_batch_size: b.max_export_batch_size,
                scheduled_delay_millis: b.scheduled_delay_millis,
                export_timeout_millis: b.export_timeout_millis,
            })
            .unwrap_or_default(),
    }
}

/// The content-capture and provider rules of tracing.md, as read from the
/// environment for each run: bit 1 capture
/// (`ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS` unset, empty, `true` or `1`),
/// bit 2 Vertex (`GOOGLE_GENAI_USE_VERTEXAI` lowercased is `true`; no
/// other character lowercases to an ASCII letter of it).
fn env_rules_from(capture: Option<&[u8]>, vertex: Option<&[u8]>) -> u32 {
    let capture = capture.is_none_or(|v| matches!(v, b"" | b"true" | b"1"));
    let vertex = vertex.is_some_and(|v| v.eq_ignore_ascii_case(b"true"));
    u32::from(capture) | (u32::from(vertex) << 1)
}

/// `env_rules_from` the process environment. On the main thread
/// `process.env` is that environment, and two reads through it cost a run
/// inside ADK's pipeline 4-7 µs, against one call here.
#[napi]
pub fn env_rules() -> u32 {
    let capture = std::env::var_os("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS");
    let vertex = std::env::var_os("GOOGLE_GENAI_USE_VERTEXAI");
    env_rules_from(
        capture.as_ref().map(|v| v.as_encoded_bytes()),
        vertex.as_ref().map(|v| v.as_encoded_bytes()),
    )
}

/// `env_rules_from` values read by JavaScript: a worker thread's
/// `process.env` is a copy of its own.
#[napi]
pub fn env_rules_of(capture: Option<String>, vertex: Option<String>) -> u32 {
    env_rules_from(
        capture.as_deref().map(str::as_bytes),
        vertex.as_deref().map(str::as_bytes),
    )
}

/// The attribute value length limit (export::config's rule) for the runs
/// a batch starts: from `given`, a worker thread's own `process.env`
/// values of `VALUE_LIMIT_VARS` in order, else from the process
/// environment. `Err`: the warning for a value that is not a number.
fn value_limit(given: Option<&[String]>) -> std::result::Result<Option<usize>, String> {
    match given {
        Some(values) => attribute_value_limit(&|name| {
            let i = VALUE_LIMIT_VARS.iter().position(|v| *v == name)?;
            values.get(i).cloned()
        }),
        None => attribute_value_limit(&|name| std::env::var(name).ok()),
    }
}

/// The application's active span as lib/tracing.js read it from
/// `@opentelemetry/api`; `None` unless both ids are valid.
fn remote_parent(
    trace_id: Option<String>,
    span_id: Option<String>,
    sampled: Option<bool>,
    is_remote: Option<bool>,
    trace_state: Option<String>,
) -> Option<RemoteParent> {
    Some(RemoteParent {
        trace_id: from_hex(trace_id.as_deref()?)?,
        span_id: from_hex(span_id.as_deref()?)?,
        sampled: sampled.unwrap_or(true),
        is_remote: is_remote.unwrap_or(false),
        trace_state: trace_state.filter(|s| !s.is_empty()).map(Into::into),
    })
}

/// The JavaScript object of a tracer. Its state lives on the tracing
/// thread (worker.rs); the callbacks' records reach it through `handle`
/// (records.rs), and each method here waits for the records handed over
/// before it.
#[napi]
pub struct NativeTracer {
    handle: u32,
    sink_id: u32,
    warning: Option<NoExportWarning>,
    prints: bool,
    answers: Arc<Answers>,
}

impl Drop for NativeTracer {
    fn drop(&mut self) {
        let handle = self.handle;
        state::forget_answers(handle);
        worker::submit(move || state::unregister(handle));
    }
}

/// Runs `f` on the tracer of `handle`, on the tracing thread, and waits.
fn on_tracer<T: Send + 'static>(
    handle: u32,
    f: impl FnOnce(&mut TracerState) -> Result<T> + Send + 'static,
) -> Result<T> {
    worker::call(move || state::with(handle, f))?
}

#[napi]
impl NativeTracer {
    /// Throws `InvalidArg` for a TypeError-kind option error, else a plain
    /// failure; lib/tracing.js maps them to TypeError / Error.
    /// `on_warning(text, kind)` is called (on the JavaScript thread, without
    /// keeping the process alive) for each warning of the exporter thread.
    #[napi(constructor)]
    pub fn new(
        mut options: NativeTracingOptions,
        on_warning: Option<Function<FnArgs<(String, String)>, ()>>,
    ) -> Result<Self> {
        let max_open = options.max_open_invocations.unwrap_or(10_000).max(1) as usize;
        let opts = export_options(&mut options);
        let environment = options.environment.take();
        let env = |k: &str| match &environment {
            Some(vars) => vars.get(k).cloned(),
            None => std::env::var(k).ok(),
        };
        let choice = match resolve(&opts, &env) {
            Ok(c) => c,
            Err(ConfigError::Type(m)) => return Err(Error::new(Status::InvalidArg, m)),
            Err(ConfigError::Plain(m)) => return Err(Error::new(Status::GenericFailure, m)),
        };
        let hook: Option<crate::export::config::WarningHook> = match on_warning {
            Some(f) => {
                let tsfn = f
                    .build_threadsafe_function::<FnArgs<(String, String)>>()
                    .weak::<true>()
                    .callee_handled::<false>()
                    .build()?;
                Some(Arc::new(move |w: SinkWarning| {
                    let args = FnArgs::from((w.text, w.kind));
                    tsfn.call(args, ThreadsafeFunctionCallMode::NonBlocking);
                }))
            }
            None => None,
        };
        let s = sinks::sinks_for(choice, options.stdout_is_tty.unwrap_or(false), &env, hook);
        let exit_timeout =
            Duration::from_millis(options.exit_flush_timeout_millis.unwrap_or(2000) as u64);
        let sink_id = if s.deliver_at_exit {
            registry::register(s.sink.clone(), exit_timeout)
        } else {
            0
        };
        let answers = Arc::new(Answers::default());
        let state = TracerState {
            tracer: Tracer::new(s.sink, max_open),
            memory: s.memory,
            answers: answers.clone(),
            pending_warnings: Vec::new(),
            limit_warned: false,
            trees: Vec::new(),
            system_json: Default::default(),
        };
        let handle = worker::call(move || state::register(Rc::new(RefCell::new(state))))?;
        state::remember_answers(handle, answers.clone());
        Ok(NativeTracer {
            handle,
            sink_id,
            warning: s.warning,
            prints: s.prints,
            answers,
        })
    }

    /// What the callback functions of records.rs take to find this tracer.
    #[napi(getter)]
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// The sink prints each trace as its run ends (the console exporter):
    /// lib/tracing.js then waits for a run's spans at its end (`settle`),
    /// so the tree comes out before what the program prints next.
    #[napi(getter)]
    pub fn prints_traces(&self) -> bool {
        self.prints
    }

    /// Waits until the tracing thread has applied every batch handed over.
    #[napi]
    pub fn settle(&self) {
        worker::barrier();
    }

    /// Set when nothing will be exported: lib/tracing.js warns once per
    /// `warningKind`.
    #[napi(getter)]
    pub fn warning(&self) -> Option<String> {
        self.warning.as_ref().map(|w| w.text.clone())
    }

    /// The kind of problem `warning` describes.
    #[napi(getter)]
    pub fn warning_kind(&self) -> Option<String> {
        self.warning.as_ref().map(|w| w.kind.as_str().to_string())
    }

    #[napi(getter)]
    pub fn open_invocation_count(&self) -> Result<u32> {
        on_tracer(self.handle, |s| Ok(s.tracer.open_count() as u32))
    }

    #[napi(getter)]
    pub fn dropped_span_count(&self) -> Result<f64> {
        on_tracer(self.handle, |s| Ok(s.tracer.sink().dropped_count() as f64))
    }

    #[napi(getter)]
    pub fn stopped(&self) -> Result<bool> {
        on_tracer(self.handle, |s| Ok(s.tracer.is_stopped()))
    }

    /// The open AgentTool runs ending `invocation_id` would end with it
    /// (lib/tracing.js supplies their held tool results first); `None` when
    /// there are none.
    #[napi]
    pub fn linked_runs(&self, invocation_id: JsString<'_>) -> Result<Option<Vec<Utf16String>>> {
        let id = key(&invocation_id)?;
        let runs = on_tracer(self.handle, move |s| Ok(s.tracer.linked_runs(&id)))?;
        // The ids as JavaScript had them (keys may hold escaped lone surrogates).
        Ok((!runs.is_empty()).then(|| {
            runs.iter()
                .map(|k| Utf16String::from(key_text::to_utf16(k)))
                .collect()
        }))
    }

    /// The trace id (32 lowercase hex) of an open or recently finished
    /// invocation.
    #[napi]
    pub fn trace_id_of(&self, invocation_id: JsString<'_>) -> Result<Option<String>> {
        let id = key(&invocation_id)?;
        on_tracer(self.handle, move |s| {
            Ok(s.tracer.trace_id_of(&id).map(|t| hex(&t)))
        })
    }

    /// Conversation slots holding items (tests check the bound).
    #[napi(getter)]
    pub fn history_count(&self) -> Result<u32> {
        on_tracer(self.handle, |s| Ok(s.tracer.history_count() as u32))
    }

    /// Conversation slots the tracing thread could not use since the last
    /// call (lib/tracing/history.js forgets them); `None` when none.
    #[napi]
    pub fn take_refused_slots(&self) -> Option<Vec<u32>> {
        let slots = std::mem::take(&mut *state::lock(&self.answers.refused));
        (!slots.is_empty()).then_some(slots)
    }

    /// Why a batch of records could not be applied, once.
    #[napi]
    pub fn take_problem(&self) -> Option<String> {
        state::lock(&self.answers.problem).take()
    }

    #[napi]
    pub fn finish_all(&mut self, interrupted: bool) -> Result<()> {
        on_tracer(self.handle, move |s| {
            s.tracer.finish_all(interrupted);
            Ok(())
        })
    }

    /// The id `flushSink`/`shutdownSink` take (0: nothing to deliver).
    #[napi(getter)]
    pub fn sink_id(&self) -> u32 {
        self.sink_id
    }

    /// Finishes open invocations as interrupted; later callbacks are no-ops.
    /// The sink is stopped separately (`shutdownSink`, or at exit).
    #[napi]
    pub fn stop(&mut self) -> Result<()> {
        on_tracer(self.handle, |s| {
            s.tracer.stop();
            Ok(())
        })
    }

    /// Warnings the sink raised since the last call (the OTLP exporter's
    /// come from its own thread), as `[text, kind]` pairs; `None` when there
    /// are none, the usual case.
    #[napi(ts_return_type = "Array<[string, string]> | null")]
    pub fn take_warnings(&mut self) -> Result<Option<Vec<Vec<String>>>> {
        on_tracer(self.handle, |s| {
            let mut warnings = std::mem::take(&mut s.pending_warnings);
            warnings.append(&mut s.tracer.sink().take_warnings());
            s.answers.warned.store(false, Ordering::Relaxed);
            let pairs: Vec<Vec<String>> =
                warnings.into_iter().map(|w| vec![w.text, w.kind]).collect();
            Ok((!pairs.is_empty()).then_some(pairs))
        })
    }

    /// api.md FinishedSpan list as JSON (times as decimal strings).
    #[napi]
    pub fn finished_spans_json(&self) -> Result<String> {
        on_tracer(self.handle, |s| {
            Ok(match &s.memory {
                Some(m) => finished::spans_json(&m.spans()),
                None => "[]".into(),
            })
        })
    }
}

#[cfg(test)]
mod env_rules_tests {
    use super::env_rules_from;

    #[test]
    fn capture_is_on_unset_empty_true_or_1_and_vertex_is_true_in_any_case() {
        let capture = |v: Option<&str>| env_rules_from(v.map(str::as_bytes), None) & 1 == 1;
        for on in [None, Some(""), Some("true"), Some("1")] {
            assert!(capture(on), "{on:?}");
        }
        for off in ["false", "0", "TRUE", "True", "yes", " 1", "1 "] {
            assert!(!capture(Some(off)), "{off}");
        }
        let vertex = |v: Option<&str>| env_rules_from(None, v.map(str::as_bytes)) & 2 == 2;
        for yes in ["true", "TRUE", "True", "tRuE"] {
            assert!(vertex(Some(yes)), "{yes}");
        }
        for no in [None, Some("1"), Some("false"), Some(" true"), Some("")] {
            assert!(!vertex(no), "{no:?}");
        }
    }
}
