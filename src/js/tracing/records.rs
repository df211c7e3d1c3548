//! The callbacks' way into a tracer: lib/tracing/records.js writes what
//! each callback read from ADK as a record (numbers in one Float64Array,
//! strings in one string) and `tracer_apply` hands a batch of them (about
//! one per run) to the tracing thread (worker.rs), which applies them to
//! the span model in order. The JavaScript thread only copies the batch.
//!
//! A record is `kind, time` (`performance.now()` in ms), then its fields in
//! the order `apply_one` reads them. A string field is one number: its
//! length in UTF-16 units, taken from the batch's text in order; -1 for
//! none; -2 - i for the i-th of the batch's big strings, passed apart
//! (long JSON reads faster as UTF-8 on its own than widened); 2^40 + i for
//! a repeat of a string read before in the batch (fields.rs).

use super::fields::{
    malformed, Fields, SAME_CONFIG, SAME_MODEL, SAME_SYSTEM_JSON, SAME_SYSTEM_TEXT, SAME_TOOLS,
};
use super::state::{self, TracerState};
use super::text::owned;
use super::worker;
use super::{remote_parent, value_limit};
use crate::trace::history::HistoryDelta;
use crate::trace::model::{
    EventInfo, FunctionResponse, ModelRequest, ModelResponse, RunSettings, RunStart,
};
use crate::trace::sink::SinkWarning;
use crate::trace::span::{at_time, clock_nanos};
use napi::bindgen_prelude::{FromNapiValue, JsValue, Utf16String};
use napi::{JsString, Result};
use napi_derive::napi;
use std::sync::atomic::Ordering;

// Record kinds; lib/tracing/records.js has the same numbers.
const START: f64 = 1.0;
const BEFORE_AGENT: f64 = 2.0;
const AFTER_AGENT: f64 = 3.0;
const BEFORE_MODEL: f64 = 4.0;
const AFTER_MODEL: f64 = 5.0;
const MODEL_ERROR: f64 = 6.0;
const BEFORE_TOOL: f64 = 7.0;
const AFTER_TOOL: f64 = 8.0;
const TOOL_ERROR: f64 = 9.0;
const EVENT: f64 = 10.0;
const FINISH: f64 = 11.0;
const LINK: f64 = 12.0;
const ADD_AGENTS: f64 = 13.0;
const FORGET_HISTORY: f64 = 14.0;
const SUPPLY_SEEN: f64 = 15.0;
const REGISTER_TREE: f64 = 16.0;
const AGENT_NODE_DONE: f64 = 17.0;

/// How many agent trees one tracer remembers (one per root agent object);
/// lib/tracing.js numbers them and sends the flat tree when none is free.
const MAX_TREES: usize = 64;

/// A batch of records, copied off the JavaScript thread's values.
struct Batch {
    nums: Vec<f64>,
    text: Utf16String,
    big: Vec<String>,
    at: HandOver,
}

/// What held as a batch was handed over, read on the JavaScript thread.
struct HandOver {
    /// The system clock and `performance.now()`: each record's time is
    /// mapped onto the clock from them.
    clock: u64,
    now: f64,
    /// The attribute value length limit for the runs the batch starts, or
    /// the warning for a bad one. Read here, not on the tracing thread:
    /// Node's `process.env` writes call `setenv` on this thread without any
    /// lock a reader elsewhere could take.
    value_limit: std::result::Result<Option<usize>, String>,
}

/// Hands `count` numbers' worth of records (`nums`, `text`, `big`) to the
/// tracing thread. `now`: `performance.now()` as this call is made.
/// Returns what the tracing thread has to tell (bits, state::Answers):
/// 1 the sink has warnings for `take_warnings`, 2 conversation slots were
/// refused (`take_refused_slots`), 4 a batch could not be applied
/// (`take_problem`). `env_limits`: on a worker thread, its own
/// `process.env` values of the limit's variables (mod.rs `value_limit`).
#[napi]
pub fn tracer_apply(
    handle: u32,
    nums: &[f64],
    count: u32,
    text: JsString<'_>,
    big: Option<Vec<JsString<'_>>>,
    now: f64,
    env_limits: Option<Vec<String>>,
) -> Result<u32> {
    let answers = state::answers(handle)?;
    let v = text.value();
    // SAFETY: `env` and `value` come from the live call.
    let text = unsafe { Utf16String::from_napi_value(v.env, v.value) }?;
    let big = big
        .unwrap_or_default()
        .iter()
        .map(owned)
        .collect::<Result<Vec<String>>>()?;
    let batch = Batch {
        nums: nums.get(..count as usize).ok_or_else(malformed)?.to_vec(),
        text,
        big,
        at: HandOver {
            clock: clock_nanos(),
            now,
            value_limit: value_limit(env_limits.as_deref()),
        },
    };
    let bits = answers.bits();
    worker::submit(move || {
        let applied = state::with(handle, |s| apply(s, &batch));
        if let Err(e) = applied {
            let mut problem = state::lock(&answers.problem);
            problem.get_or_insert_with(|| e.reason.clone());
        }
    });
    Ok(bits)
}

/// Applies a batch in order, on the tracing thread.
fn apply(s: &mut TracerState, batch: &Batch) -> Result<()> {
    let mut f = Fields::new(&batch.nums, &batch.text, &batch.big);
    let mut refused = Vec::new();
    let mut outcome = Ok(());
    if let Err(warning) = &batch.at.value_limit {
        if !s.limit_warned {
            s.limit_warned = true;
            s.pending_warnings.push(SinkWarning {
                kind: "value-limit".into(),
                text: warning.clone(),
            });
        }
    }
    while !f.done() {
        if let Err(e) = apply_one(s, &mut f, &batch.at, &mut refused) {
            // The rest of the batch cannot be read past a bad record.
            outcome = Err(e);
            break;
        }
    }
    let mut raised = s.tracer.sink().take_warnings();
    s.pending_warnings.append(&mut raised);
    if !s.pending_warnings.is_empty() {
        s.answers.warned.store(true, Ordering::Relaxed);
    }
    if !refused.is_empty() {
        state::lock(&s.answers.refused).append(&mut refused);
    }
    outcome
}

/// The Unix time of a record taken at `at` (ms, performance.now()).
fn record_time(clock: u64, now: f64, at: f64) -> u64 {
    let ago = ((now - at) * 1e6).max(0.0);
    clock.saturating_sub(ago as u64)
}

fn apply_one(
    s: &mut TracerState,
    f: &mut Fields<'_>,
    at: &HandOver,
    refused: &mut Vec<u32>,
) -> Result<()> {
    let kind = f.num()?;
    let time = record_time(at.clock, at.now, f.num()?);
    if kind == FORGET_HISTORY {
        s.tracer.forget_history(f.num()? as u32);
        return Ok(());
    }
    if kind == REGISTER_TREE {
        // Handles are numbered by lib/tracing.js in this same order.
        let handle = f.num()? as usize;
        let agents = f.agents()?;
        if handle != s.trees.len() + 1 || handle > MAX_TREES {
            return Err(malformed());
        }
        s.trees.push(agents);
        return Ok(());
    }
    if kind == START {
        let run = start(s, f, at.value_limit.as_ref().ok().copied().flatten())?;
        at_time(time, || s.tracer.start(run));
        return Ok(());
    }
    let id = f.some_key()?;
    match kind {
        BEFORE_AGENT | AFTER_AGENT => {
            let agent = f.key()?;
            at_time(time, || {
                if kind == BEFORE_AGENT {
                    s.tracer.before_agent(&id, agent.as_deref())
                } else {
                    s.tracer.after_agent(&id, agent.as_deref())
                }
            });
        }
        AGENT_NODE_DONE => {
            let agent = f.key()?;
            if let Some(agent) = agent {
                at_time(time, || s.tracer.agent_node_done(&id, &agent));
            }
        }
        BEFORE_MODEL => {
            let agent = f.key()?;
            let model = f.same_text(SAME_MODEL)?;
            let config_json = f.same_text(SAME_CONFIG)?;
            let tools_json = f.same_text(SAME_TOOLS)?;
            let system_json = f.same_text(SAME_SYSTEM_JSON)?;
            let contents_json = f.text()?;
            let slot = f.num()?;
            let reuse = f.num()?;
            let keep = f.opt_flag()?;
            // A string instruction comes as is; its JSON is written here.
            let system_json = match f.same_text(SAME_SYSTEM_TEXT)? {
                Some(text) => Some(s.system_json.of(text)),
                None => system_json,
            };
            let slot = slot as u32;
            let history = (slot > 0).then(|| HistoryDelta {
                slot,
                reuse: reuse as u32,
                keep: keep.unwrap_or(true),
            });
            let request = ModelRequest {
                model,
                config_json,
                tools_json,
                system_json,
                contents_json,
                history,
            };
            let applied = at_time(time, || {
                s.tracer.before_model(&id, agent.as_deref(), request)
            });
            if !applied && slot > 0 {
                refused.push(slot);
            }
        }
        AFTER_MODEL => {
            let agent = f.key()?;
            let partial = f.flag()?;
            let finish_reason = f.text()?;
            let (has_usage, usage) = f.usage()?;
            let response = ModelResponse {
                partial,
                finish_reason,
                usage,
                error_code: f.text()?,
                error_message: f.text()?,
                content_json: f.text()?,
                has_usage,
                yields_event: f.flag()?,
                response_id: f.text()?,
                response_model: f.text()?,
            };
            at_time(time, || {
                s.tracer.after_model(&id, agent.as_deref(), response)
            });
        }
        MODEL_ERROR => {
            let agent = f.key()?;
            let error_type = f.text_or_empty()?;
            let message = f.text_or_empty()?;
            at_time(time, || {
                s.tracer
                    .model_error(&id, agent.as_deref(), &error_type, &message)
            });
        }
        BEFORE_TOOL | AFTER_TOOL | TOOL_ERROR => {
            let agent = f.key()?;
            let tool = f.key()?.unwrap_or_default();
            let call_id = f.key()?;
            let (agent, call_id) = (agent.as_deref(), call_id.as_deref());
            if kind == BEFORE_TOOL {
                let args_json = f.text()?;
                at_time(time, || {
                    s.tracer.before_tool(&id, agent, &tool, call_id, args_json)
                });
            } else if kind == AFTER_TOOL {
                let token = f.num()? as u32;
                let answered_type = f.text()?;
                let answered_message = f.text()?;
                let answered = answered_type.map(|t| (t, answered_message.unwrap_or_default()));
                at_time(time, || {
                    s.tracer
                        .after_tool(&id, agent, &tool, call_id, token, answered)
                });
            } else {
                let error_type = f.text_or_empty()?;
                let message = f.text_or_empty()?;
                at_time(time, || {
                    s.tracer
                        .tool_error(&id, agent, &tool, call_id, &error_type, &message)
                });
            }
        }
        EVENT => {
            let author = f.key()?;
            let partial = f.flag()?;
            let error_code = f.text()?;
            let error_message = f.text()?;
            let content_json = f.text()?;
            let responses_only = f.flag()?;
            let count = f.num()? as usize;
            let mut function_responses = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                function_responses.push(FunctionResponse {
                    id: f.key()?.unwrap_or_default(),
                    name: f.key()?.unwrap_or_default(),
                    response_json: f.text_or_empty()?,
                });
            }
            let finish_reason = f.text()?;
            let (has_usage, usage) = f.usage()?;
            let ends_run = f.opt_flag()?;
            let event = EventInfo {
                author,
                partial,
                error_code,
                error_message,
                content_json,
                function_responses,
                responses_only,
                finish_reason,
                usage,
                has_usage,
                ends_run,
            };
            at_time(time, || s.tracer.on_event(&id, event));
        }
        FINISH => {
            let interrupted = f.flag()?;
            at_time(time, || s.tracer.finish(&id, interrupted));
        }
        LINK => {
            let parent = f.some_key()?;
            let call_id = f.key()?;
            let tool = f.key()?;
            at_time(time, || {
                s.tracer
                    .link(&id, &parent, call_id.as_deref(), tool.as_deref())
            });
        }
        SUPPLY_SEEN => {
            let token = f.num()? as u32;
            let json = f.text_or_empty()?;
            s.tracer.supply_seen(&id, token, json);
        }
        ADD_AGENTS => {
            let agents = f.agents()?;
            at_time(time, || s.tracer.add_agents(&id, agents));
        }
        _ => return Err(malformed()),
    }
    Ok(())
}

/// A START record: the run's details, its agent tree (a handle of a
/// REGISTER_TREE record, else the flat tree), and the application's span it is
/// a child of (joinActiveTrace).
fn start(s: &TracerState, f: &mut Fields<'_>, value_limit: Option<usize>) -> Result<RunStart> {
    let invocation_id = f.some_key()?;
    let session_id = f.text()?;
    let app_name = f.text()?;
    let user_id = f.text()?;
    let root_name = f.text()?;
    let root_description = f.text()?;
    let tree = f.num()? as usize;
    let flat = f.agents()?;
    let agents = match tree.checked_sub(1).and_then(|i| s.trees.get(i)) {
        Some(known) => known.clone(),
        None => flat,
    };
    let user_content = f.text()?;
    let capture = f.flag()?;
    let vertex = f.flag()?;
    let parent_trace_id = f.text()?;
    let parent_span_id = f.text()?;
    let parent_sampled = f.opt_flag()?;
    let parent_is_remote = f.opt_flag()?;
    let parent_trace_state = f.text()?;
    let streams = f.flag()?;
    Ok(RunStart {
        invocation_id,
        session_id,
        app_name,
        user_id,
        root_name,
        root_description,
        agents,
        user_content,
        settings: RunSettings {
            capture,
            vertex,
            value_limit,
            streams,
        },
        remote_parent: remote_parent(
            parent_trace_id,
            parent_span_id,
            parent_sampled,
            parent_is_remote,
            parent_trace_state,
        ),
    })
}
