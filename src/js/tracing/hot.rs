//! The callbacks' way into a tracer: exported functions taking its handle
//! (state.rs says why not class methods). Each takes the primitives and
//! JSON strings lib/tracing.js read from ADK's objects.

use super::state;
use super::text::{key, key_opt, opt, owned};
use super::{agent_list, remote_parent, value_limit};
use crate::trace::history::HistoryDelta;
use crate::trace::model::{
    EventInfo, FunctionResponse, ModelRequest, ModelResponse, RunSettings, RunStart,
};
use napi::{JsString, Result};
use napi_derive::napi;

/// `tree`: a handle of `register_tree` (0: none); else `agents`: the
/// root agent's tree as flat 5-tuples
/// (name, parent, description, model, sequential ? '1' : '').
/// `parent_trace_id`, `parent_span_id` (hex) and `parent_sampled`: the
/// application's span the run's root is a child of (joinActiveTrace);
/// `parent_is_remote` and `parent_trace_state`: that span context's
/// `isRemote` and serialised `traceState`.
#[allow(clippy::too_many_arguments)]
#[napi]
pub fn tracer_start_invocation(
    handle: u32,
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
    state::with(handle, |s| {
        let agents = match (tree as usize).checked_sub(1).and_then(|i| s.trees.get(i)) {
            Some(known) => known.clone(),
            None => agent_list(agents)?,
        };
        s.tracer.start(RunStart {
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
    })
}

#[napi]
pub fn tracer_before_agent(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer
            .before_agent(&key(&invocation_id)?, key_opt(&agent)?.as_deref());
        Ok(())
    })
}

#[napi]
pub fn tracer_after_agent(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer
            .after_agent(&key(&invocation_id)?, key_opt(&agent)?.as_deref());
        Ok(())
    })
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
pub fn tracer_before_model(
    handle: u32,
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
    state::with(handle, |s| {
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
        Ok(s.tracer.before_model(
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
    })
}

/// The prompt, candidates, total, thoughts and cached token counts are
/// NaN when absent: five numbers cost less to pass than an array.
/// `streamed`: the run streams (SSE), so the call may answer in several
/// non-partial responses; `has_usage`: a usageMetadata was there, even
/// one without counts.
#[allow(clippy::too_many_arguments)]
#[napi]
pub fn tracer_after_model(
    handle: u32,
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
    state::with(handle, |s| {
        let counts = [
            prompt_tokens,
            candidates_tokens,
            total_tokens,
            thoughts_tokens,
            cached_tokens,
        ]
        .map(|v| v.is_finite().then_some(v as i64));
        s.tracer.after_model(
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
    })
}

#[napi]
pub fn tracer_model_error(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
    error_type: JsString<'_>,
    message: JsString<'_>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer.model_error(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &owned(&error_type)?,
            &owned(&message)?,
        );
        Ok(())
    })
}

#[napi]
pub fn tracer_before_tool(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
    tool: JsString<'_>,
    call_id: Option<JsString<'_>>,
    args_json: Option<JsString<'_>>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer.before_tool(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            opt(&args_json)?,
        );
        Ok(())
    })
}

/// `seen_token`: lib/tracing.js's handle of the result
/// afterToolCallback saw (0: none), for when no function response event
/// reaches this plugin (`seen_wanted`, `supply_seen`).
#[napi]
pub fn tracer_after_tool(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
    tool: JsString<'_>,
    call_id: Option<JsString<'_>>,
    seen_token: Option<u32>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer.after_tool(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            seen_token.unwrap_or(0),
        );
        Ok(())
    })
}

/// The held results (`after_tool`'s tokens) the end of this invocation
/// needs as JSON; `None` when none (the usual case: their events came).
#[napi]
pub fn tracer_seen_wanted(handle: u32, invocation_id: JsString<'_>) -> Result<Option<Vec<u32>>> {
    state::with(handle, |s| {
        let wanted = s.tracer.seen_wanted(&key(&invocation_id)?);
        Ok((!wanted.is_empty()).then_some(wanted))
    })
}

/// The JSON of a held result `seen_wanted` asked for.
#[napi]
pub fn tracer_supply_seen(
    handle: u32,
    invocation_id: JsString<'_>,
    token: u32,
    result_json: JsString<'_>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer
            .supply_seen(&key(&invocation_id)?, token, owned(&result_json)?);
        Ok(())
    })
}

#[napi]
pub fn tracer_tool_error(
    handle: u32,
    invocation_id: JsString<'_>,
    agent: Option<JsString<'_>>,
    tool: JsString<'_>,
    call_id: Option<JsString<'_>>,
    error_type: JsString<'_>,
    message: JsString<'_>,
) -> Result<()> {
    state::with(handle, |s| {
        s.tracer.tool_error(
            &key(&invocation_id)?,
            key_opt(&agent)?.as_deref(),
            &key(&tool)?,
            key_opt(&call_id)?.as_deref(),
            &owned(&error_type)?,
            &owned(&message)?,
        );
        Ok(())
    })
}

/// `responses`: flat triples (call id, tool name, response JSON);
/// `responses_only`: the content is just those (not sent as JSON).
#[allow(clippy::too_many_arguments)]
#[napi]
pub fn tracer_on_event(
    handle: u32,
    invocation_id: JsString<'_>,
    author: Option<JsString<'_>>,
    partial: bool,
    error_code: Option<JsString<'_>>,
    error_message: Option<JsString<'_>>,
    content_json: Option<JsString<'_>>,
    responses: Option<Vec<JsString<'_>>>,
    responses_only: Option<bool>,
) -> Result<()> {
    state::with(handle, |s| {
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
        s.tracer.on_event(
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
    })
}

/// Ends an invocation. Returns `2 * open + warned`: how many
/// invocations are still open, plus 1 when the sink has warnings for
/// `take_warnings`, so the end of a run is one call into Rust.
#[napi]
pub fn tracer_finish(handle: u32, invocation_id: JsString<'_>, interrupted: bool) -> Result<f64> {
    state::with(handle, |s| {
        s.tracer.finish(&key(&invocation_id)?, interrupted);
        let mut raised = s.tracer.sink().take_warnings();
        s.pending_warnings.append(&mut raised);
        let open = s.tracer.open_count() as f64;
        Ok(open * 2.0 + f64::from(u8::from(!s.pending_warnings.is_empty())))
    })
}
