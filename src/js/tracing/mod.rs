//! napi class behind lib/tracing.js: every callback method is synchronous and
//! takes primitives and JSON strings the JavaScript shell read from ADK's
//! objects; the span model (crate::trace) does the rest.

mod finished;
mod registry;
mod sinks;
mod tasks;
mod text;

use crate::export::config::{resolve, BatchOptions, ConfigError, ExportOptions, WeaveOptions};
use crate::export::memory::MemorySink;
use crate::trace::history::HistoryDelta;
use crate::trace::ids::{from_hex, hex};
use crate::trace::inputs::AgentInfo;
use crate::trace::key_text;
use crate::trace::model::{
    EventInfo, FunctionResponse, ModelRequest, ModelResponse, RemoteParent, RunSettings, RunStart,
    Tracer,
};
use napi::bindgen_prelude::{Function, Utf16String};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{Error, JsString, Result, Status};
use napi_derive::napi;
use std::sync::Arc;
use std::time::Duration;
use text::{key, key_opt, opt, owned};

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

/// The options of `new TracingPlugin(...)`, type-checked by lib/tracing.js.
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

fn value_limit() -> Option<usize> {
    std::env::var("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
}

/// The flat 5-tuples of lib/tracing/agents.js as AgentInfo. Names are
/// keys (`text::key`): the callbacks' agent names are compared with them.
fn agent_list(flat: Option<Vec<JsString<'_>>>) -> Result<Vec<AgentInfo>> {
    flat.unwrap_or_default()
        .chunks_exact(5)
        .map(|c| {
            Ok(AgentInfo {
                name: key(&c[0])?,
                parent: Some(key(&c[1])?).filter(|p| !p.is_empty()),
                description: Some(owned(&c[2])?).filter(|p| !p.is_empty()),
                model: Some(owned(&c[3])?).filter(|p| !p.is_empty()),
                sequential: owned(&c[4]).is_ok_and(|s| !s.is_empty()),
            })
        })
        .collect()
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

#[napi]
pub struct NativeTracer {
    tracer: Tracer,
    memory: Option<Arc<MemorySink>>,
    warning: Option<String>,
    /// The sink's id in `registry` (0: nothing to deliver at exit).
    sink_id: u32,
    /// Sink warnings picked up by `finish`, handed out by `take_warnings`
    /// (only when no `on_warning` hook delivers them as they come).
    pending_warnings: Vec<String>,
    /// Agent trees sent once by `register_tree` (handle = index + 1), so a
    /// run's start does not convert the whole tree again. Bounded by
    /// `MAX_TREES`; lib/tracing.js passes the flat tree when none is free.
    trees: Vec<Vec<AgentInfo>>,
}

/// How many agent trees one tracer remembers (one per root agent object).
const MAX_TREES: usize = 64;

#[napi]
impl NativeTracer {
    /// Throws `InvalidArg` for a TypeError-kind option error, else a plain
    /// failure; lib/tracing.js maps them to TypeError / Error.
    /// `on_warning(message)` is called (on the JavaScript thread, without
    /// keeping the process alive) for each warning of the exporter thread.
    #[napi(constructor)]
    pub fn new(
        mut options: NativeTracingOptions,
        on_warning: Option<Function<String, ()>>,
    ) -> Result<Self> {
        let max_open = options.max_open_invocations.unwrap_or(10_000).max(1) as usize;
        let opts = export_options(&mut options);
        let choice = match resolve(&opts, &|k| std::env::var(k).ok()) {
            Ok(c) => c,
            Err(ConfigError::Type(m)) => return Err(Error::new(Status::InvalidArg, m)),
            Err(ConfigError::Plain(m)) => return Err(Error::new(Status::GenericFailure, m)),
        };
        let hook: Option<crate::export::config::WarningHook> = match on_warning {
            Some(f) => {
                let tsfn = f
                    .build_threadsafe_function::<String>()
                    .weak::<true>()
                    .callee_handled::<false>()
                    .build()?;
                Some(Arc::new(move |message: String| {
                    tsfn.call(message, ThreadsafeFunctionCallMode::NonBlocking);
                }))
            }
            None => None,
        };
        let s = sinks::sinks_for(choice, options.stdout_is_tty.unwrap_or(false), hook);
        let exit_timeout =
            Duration::from_millis(options.exit_flush_timeout_millis.unwrap_or(2000) as u64);
        let sink_id = if s.deliver_at_exit {
            registry::register(s.sink.clone(), exit_timeout)
        } else {
            0
        };
        Ok(NativeTracer {
            tracer: Tracer::new(s.sink, max_open),
            memory: s.memory,
            warning: s.warning,
            sink_id,
            pending_warnings: Vec::new(),
            trees: Vec::new(),
        })
    }

    /// Set when nothing will be exported: lib/tracing.js warns once.
    #[napi(getter)]
    pub fn warning(&self) -> Option<String> {
        self.warning.clone()
    }

    #[napi(getter)]
    pub fn open_invocation_count(&self) -> u32 {
        self.tracer.open_count() as u32
    }

    #[napi(getter)]
    pub fn dropped_span_count(&self) -> f64 {
        self.tracer.sink().dropped_count() as f64
    }

    #[napi(getter)]
    pub fn stopped(&self) -> bool {
        self.tracer.is_stopped()
    }

    /// Remembers an agent tree (flat 5-tuples as in `start_invocation`);
    /// returns its handle, or 0 when the tracer holds `MAX_TREES` already.
    #[napi]
    pub fn register_tree(&mut self, agents: Option<Vec<JsString<'_>>>) -> Result<u32> {
        if self.trees.len() >= MAX_TREES {
            return Ok(0);
        }
        self.trees.push(agent_list(agents)?);
        Ok(self.trees.len() as u32)
    }

    /// `tree`: a handle of `register_tree` (0: none); else `agents`: the
    /// root agent's tree as flat 5-tuples
    /// (name, parent, description, model, sequential ? '1' : '').
    /// `parent_trace_id`, `parent_span_id` (hex) and `parent_sampled`: the
    /// application's span the run's root is a child of (joinActiveTrace);
    /// `parent_is_remote` and `parent_trace_state`: that span context's
    /// `isRemote` and serialised `traceState`.
    #[allow(clippy::too_many_arguments)]
    #[napi]
    pub fn start_invocation(
        &mut self,
        invocation_id: JsString<'_>,
        session_id: Option<JsString<'_>>,
        app_name: Option<JsString<'_>>,
        user_id: Option<JsString<'_>>,
        root_name: Option<JsString<'_>>,
        root_description: Option<JsString<'_>>,
        tree: u32,
        agents: Option<Vec<JsString<'_>>>,
        user_content_json: Option<JsString<'_>>,
        capture: bool,
        vertex: bool,
        parent_trace_id: Option<String>,
        parent_span_id: Option<String>,
        parent_sampled: Option<bool>,
        parent_is_remote: Option<bool>,
        parent_trace_state: Option<String>,
    ) -> Result<()> {
        let agents = match (tree as usize)
            .checked_sub(1)
            .and_then(|i| self.trees.get(i))
        {
            Some(known) => known.clone(),
            None => agent_list(agents)?,
        };
        self.tracer.start(RunStart {
            invocation_id: key(&invocation_id)?,
            session_id: opt(&session_id)?,
            app_name: opt(&app_name)?,
            user_id: opt(&user_id)?,
            root_name: opt(&root_name)?,
            root_description: opt(&root_description)?,
            agents,
            user_content: opt(&user_content_json)?,
            settings: RunSettings {
                capture,
                vertex,
                value_limit: value_limit(),
            },
            remote_parent: remote_parent(
                parent_trace_id,
                parent_span_id,
                parent_sampled,
                parent_is_remote,
                parent_trace_state,
            ),
        });
        Ok(())
    }

    /// Makes a run just started by this package's AgentTool a child of the
    /// call that started it (`parent_invocation_id`, function call id, tool
    /// name): same trace, root under that call's `execute_tool` span.
    #[napi]
    pub fn link_invocation(
        &mut self,
        invocation_id: JsString<'_>,
        parent_invocation_id: JsString<'_>,
        function_call_id: Option<JsString<'_>>,
        tool_name: Option<JsString<'_>>,
    ) -> Result<()> {
        self.tracer.link(
            &key(&invocation_id)?,
            &key(&parent_invocation_id)?,
            key_opt(&function_call_id)?.as_deref(),
            key_opt(&tool_name)?.as_deref(),
        );
        Ok(())
    }

    /// The open AgentTool runs ending `invocation_id` would end with it
    /// (lib/tracing.js supplies their held tool results first); `None` when
    /// there are none.
    #[napi]
    pub fn linked_runs(&self, invocation_id: JsString<'_>) -> Result<Option<Vec<Utf16String>>> {
        let runs = self.tracer.linked_runs(&key(&invocation_id)?);
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
        Ok(self
            .tracer
            .trace_id_of(&key(&invocation_id)?)
            .map(|t| hex(&t)))
    }

    /// Agents of a tree learnt after the run started (Workflow roots).
    #[napi]
    pub fn add_agents(
        &mut self,
        invocation_id: JsString<'_>,
        agents: Option<Vec<JsString<'_>>>,
    ) -> Result<()> {
        self.tracer
            .add_agents(&key(&invocation_id)?, agent_list(agents)?);
        Ok(())
    }

    #[napi]
    pub fn before_agent(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
    ) -> Result<()> {
        self.tracer
            .before_agent(&key(&invocation_id)?, key_opt(&agent)?.as_deref());
        Ok(())
    }

    #[napi]
    pub fn after_agent(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
    ) -> Result<()> {
        self.tracer
            .after_agent(&key(&invocation_id)?, key_opt(&agent)?.as_deref());
        Ok(())
    }

    /// With `history_slot` (lib/tracing/history.js), `contents_json` holds
    /// only the items after the first `reuse` of that conversation slot,
    /// which keeps the whole list afterwards unless `keep` is false.
    /// Returns false when the slot could not supply them (JavaScript then
    /// forgets the conversation and sends it in full next time).
    /// `system_text`: a system instruction that is a (well-formed) string,
    /// sent as is instead of `system_json` — its JSON is written here,
    /// which costs less than `JSON.stringify` on the JavaScript thread.
    #[allow(clippy::too_many_arguments)]
    #[napi]
    pub fn before_model(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        model: Option<JsString<'_>>,
        config_json: Option<JsString<'_>>,
        tools_json: Option<JsString<'_>>,
        system_json: Option<JsString<'_>>,
        contents_json: Option<JsString<'_>>,
        history_slot: Option<u32>,
        reuse: Option<u32>,
        keep: Option<bool>,
        system_text: Option<JsString<'_>>,
    ) -> Result<bool> {
        let system_json = match opt(&system_text)? {
            Some(text) => serde_json::to_string(&text).ok(),
            None => opt(&system_json)?,
        };
        // Big contents go through napi-rs's own String read (see text.rs).
        let contents_json = opt(&contents_json)?.map(String::into_bytes);
        let history = history_slot.filter(|s| *s > 0).map(|slot| HistoryDelta {
            slot,
            reuse: reuse.unwrap_or(0),
            keep: keep.unwrap_or(true),
        });
        Ok(self.tracer.before_model(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            ModelRequest {
                model: opt(&model)?,
                config_json: opt(&config_json)?,
                tools_json: opt(&tools_json)?,
                system_json,
                contents_json,
                history,
            },
        ))
    }

    /// Drops the items a conversation slot keeps (lib/tracing/history.js).
    #[napi]
    pub fn forget_history(&mut self, slot: u32) {
        self.tracer.forget_history(slot);
    }

    /// Conversation slots holding items (tests check the bound).
    #[napi(getter)]
    pub fn history_count(&self) -> u32 {
        self.tracer.history_count() as u32
    }

    /// The prompt, candidates, total, thoughts and cached token counts are
    /// NaN when absent: five numbers cost less to pass than an array.
    /// `streamed`: the run streams (SSE), so the call may answer in several
    /// non-partial responses; `has_usage`: a usageMetadata was there, even
    /// one without counts.
    #[allow(clippy::too_many_arguments)]
    #[napi]
    pub fn after_model(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        partial: bool,
        finish_reason: Option<JsString<'_>>,
        prompt_tokens: f64,
        candidates_tokens: f64,
        total_tokens: f64,
        thoughts_tokens: f64,
        cached_tokens: f64,
        error_code: Option<JsString<'_>>,
        error_message: Option<JsString<'_>>,
        content_json: Option<JsString<'_>>,
        streamed: Option<bool>,
        has_usage: Option<bool>,
    ) -> Result<()> {
        let counts = [
            prompt_tokens,
            candidates_tokens,
            total_tokens,
            thoughts_tokens,
            cached_tokens,
        ]
        .map(|v| v.is_finite().then_some(v as i64));
        self.tracer.after_model(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            ModelResponse {
                partial,
                finish_reason: opt(&finish_reason)?,
                usage: counts,
                error_code: opt(&error_code)?,
                error_message: opt(&error_message)?,
                content_json: opt(&content_json)?,
                streamed: streamed.unwrap_or(false),
                has_usage: has_usage.unwrap_or(false),
            },
        );
        Ok(())
    }

    #[napi]
    pub fn model_error(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        error_type: JsString<'_>,
        message: JsString<'_>,
    ) -> Result<()> {
        self.tracer.model_error(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &owned(&error_type)?,
            &owned(&message)?,
        );
        Ok(())
    }

    #[napi]
    pub fn before_tool(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        tool: JsString<'_>,
        call_id: Option<JsString<'_>>,
        args_json: Option<JsString<'_>>,
    ) -> Result<()> {
        self.tracer.before_tool(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            opt(&args_json)?,
        );
        Ok(())
    }

    /// `seen_token`: lib/tracing.js's handle of the result
    /// afterToolCallback saw (0: none), for when no function response event
    /// reaches this plugin (`seen_wanted`, `supply_seen`).
    #[napi]
    pub fn after_tool(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        tool: JsString<'_>,
        call_id: Option<JsString<'_>>,
        seen_token: Option<u32>,
    ) -> Result<()> {
        self.tracer.after_tool(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            seen_token.unwrap_or(0),
        );
        Ok(())
    }

    /// The held results (`after_tool`'s tokens) the end of this invocation
    /// needs as JSON; `None` when none (the usual case: their events came).
    #[napi]
    pub fn seen_wanted(&self, invocation_id: JsString<'_>) -> Result<Option<Vec<u32>>> {
        let wanted = self.tracer.seen_wanted(&key(&invocation_id)?);
        Ok((!wanted.is_empty()).then_some(wanted))
    }

    /// The JSON of a held result `seen_wanted` asked for.
    #[napi]
    pub fn supply_seen(
        &mut self,
        invocation_id: JsString<'_>,
        token: u32,
        result_json: JsString<'_>,
    ) -> Result<()> {
        self.tracer
            .supply_seen(&key(&invocation_id)?, token, owned(&result_json)?);
        Ok(())
    }

    #[napi]
    pub fn tool_error(
        &mut self,
        invocation_id: JsString<'_>,
        agent: Option<JsString<'_>>,
        tool: JsString<'_>,
        call_id: Option<JsString<'_>>,
        error_type: JsString<'_>,
        message: JsString<'_>,
    ) -> Result<()> {
        self.tracer.tool_error(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            &owned(&error_type)?,
            &owned(&message)?,
        );
        Ok(())
    }

    /// `responses`: flat triples (call id, tool name, response JSON);
    /// `responses_only`: the content is just those (not sent as JSON).
    #[allow(clippy::too_many_arguments)]
    #[napi]
    pub fn on_event(
        &mut self,
        invocation_id: JsString<'_>,
        author: Option<JsString<'_>>,
        partial: bool,
        error_code: Option<JsString<'_>>,
        error_message: Option<JsString<'_>>,
        content_json: Option<JsString<'_>>,
        responses: Option<Vec<JsString<'_>>>,
        responses_only: Option<bool>,
    ) -> Result<()> {
        // Read once each (text.rs): a response JSON can be a big tool result.
        let flat = responses.unwrap_or_default();
        let mut function_responses = Vec::with_capacity(flat.len() / 3);
        for triple in flat.chunks_exact(3) {
            function_responses.push(FunctionResponse {
                id: key(&triple[0])?,
                name: key(&triple[1])?,
                response_json: owned(&triple[2])?,
            });
        }
        self.tracer.on_event(
            &key(&invocation_id)?,
            EventInfo {
                author: key_opt(&author)?,
                partial,
                error_code: opt(&error_code)?,
                error_message: opt(&error_message)?,
                content_json: opt(&content_json)?,
                function_responses,
                responses_only: responses_only.unwrap_or(false),
            },
        );
        Ok(())
    }

    /// Ends an invocation. Returns `2 * open + warned`: how many
    /// invocations are still open, plus 1 when the sink has warnings for
    /// `take_warnings`, so the end of a run is one call into Rust.
    #[napi]
    pub fn finish(&mut self, invocation_id: JsString<'_>, interrupted: bool) -> Result<f64> {
        self.tracer.finish(&key(&invocation_id)?, interrupted);
        let mut raised = self.tracer.sink().take_warnings();
        self.pending_warnings.append(&mut raised);
        let open = self.tracer.open_count() as f64;
        Ok(open * 2.0 + f64::from(u8::from(!self.pending_warnings.is_empty())))
    }

    #[napi]
    pub fn finish_all(&mut self, interrupted: bool) {
        self.tracer.finish_all(interrupted);
    }

    /// The id `flushSink`/`shutdownSink` take (0: nothing to deliver).
    #[napi(getter)]
    pub fn sink_id(&self) -> u32 {
        self.sink_id
    }

    /// Finishes open invocations as interrupted; later callbacks are no-ops.
    /// The sink is stopped separately (`shutdownSink`, or at exit).
    #[napi]
    pub fn stop(&mut self) {
        self.tracer.stop();
    }

    /// Warnings the sink raised since the last call (the OTLP exporter's
    /// come from its own thread); `None` when there are none, the usual case.
    #[napi]
    pub fn take_warnings(&mut self) -> Option<Vec<String>> {
        let mut warnings = std::mem::take(&mut self.pending_warnings);
        warnings.append(&mut self.tracer.sink().take_warnings());
        (!warnings.is_empty()).then_some(warnings)
    }

    /// api.md FinishedSpan list as JSON (times as decimal strings).
    #[napi]
    pub fn finished_spans_json(&self) -> String {
        match &self.memory {
            Some(m) => finished::spans_json(&m.spans()),
            None => "[]".into(),
        }
    }
}
