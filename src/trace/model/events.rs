//! Events: function responses end their tool spans, final answers end
//! their agents' runs, errors go to the root, a cached answer ends its model span.

use super::Tracer;
use crate::trace::agents::{end_agents_under, note_run_state};
use crate::trace::attributes::apply_tool_outcome;
use crate::trace::inputs::*;
use crate::trace::invocation::Invocation;
use crate::trace::key_text::display;
use crate::trace::span::{now_nanos, SpanData};
use crate::trace::streamed::{response_error, Outcome, StreamedTurn};
use crate::trace::tool_failure::{plugin_tool_error, ToolCallback};

/// The Content JSON of an event made only of function responses.
fn responses_content(responses: &[FunctionResponse]) -> String {
    let size: usize = responses.iter().map(|r| r.response_json.len() + 64).sum();
    let mut out = String::with_capacity(size + 32);
    out.push_str(r#"{"role":"user","parts":["#);
    for (i, r) in responses.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"functionResponse":{"id":"#);
        out.push_str(&serde_json::Value::String(display(&r.id).into_owned()).to_string());
        out.push_str(r#","name":"#);
        out.push_str(&serde_json::Value::String(display(&r.name).into_owned()).to_string());
        out.push_str(r#","response":"#);
        out.push_str(if r.response_json.is_empty() {
            "{}"
        } else {
            &r.response_json
        });
        out.push_str("}}");
    }
    out.push_str("]}");
    out
}

/// Ends tool call `i` of `inv` as failed with `error` (type, message) at
/// `now`, unless a tool callback had already failed it (then as it stands,
/// at that callback), and the agents outside the tree it ran.
fn end_failed_tool(
    inv: &mut Invocation,
    i: usize,
    (error_type, message): (&str, &str),
    now: u64,
    ended: &mut Vec<SpanData>,
) {
    let mut t = inv.tools.remove(i);
    let end = if t.errored {
        t.last_callback
    } else {
        t.span.error(error_type, message);
        now
    };
    end_agents_under(inv, t.span.id, end, ended);
    ended.push(t.span.finish(inv.trace_id, end, inv.limit));
}

impl Tracer {
    pub fn on_event(&mut self, inv_id: &str, ev: EventInfo) {
        if ev.partial {
            return;
        }
        let Some(inv) = self.inv(inv_id) else { return };
        let limit = inv.limit;
        let mut ended = Vec::new();
        let author = ev.author.as_deref().unwrap_or("");
        if ev.error_code.is_some() || ev.error_message.is_some() {
            // tracing.md's `??`: a field that is there counts, even empty
            // (a model error thrown as `new Error('')` has message '').
            let code = ev.error_code.as_deref().unwrap_or("Error").to_string();
            let msg = (ev.error_message.as_deref())
                .or(ev.error_code.as_deref())
                .unwrap_or("ADK event error")
                .to_string();
            // A tool call whose callbacks threw (ReflectAndRetryToolPlugin
            // rethrowing past its limit) gets no function response: this
            // error event of its agent is its outcome, with the thrown
            // error's own name and message when a plugin threw it.
            let thrown = ev.error_message.as_deref().and_then(plugin_tool_error);
            let (tool_code, tool_msg) = match &thrown {
                Some(e) => (e.error_type, e.message),
                None => (code.as_str(), msg.as_str()),
            };
            let trace_id = inv.trace_id;
            let now = now_nanos();
            let before = ended.len();
            let mut i = 0;
            while i < inv.tools.len() {
                let t = &inv.tools[i];
                if t.agent != author || t.callbacks_done {
                    i += 1;
                    continue;
                }
                end_failed_tool(inv, i, (tool_code, tool_msg), now, &mut ended);
            }
            // A Workflow tool node's call has no agent (its callbacks' contexts
            // have none) while its error event's author is the node, no
            // agent: the one such call still open, if the error is ADK's
            // report of that tool's failure, is the one that failed.
            let by_agent = inv.tree.contains_key(author) || inv.agent_span_id(author).is_some();
            if ended.len() == before && !by_agent {
                let mut open = (inv.tools.iter().enumerate())
                    .filter(|(_, t)| t.agent.is_empty() && !t.callbacks_done)
                    .filter(|(_, t)| {
                        // A ToolNode is named after its tool by default; ADK's
                        // FunctionTool reports its failure so.
                        t.tool == author
                            || tool_msg.contains(&format!("Error in tool '{}'", t.tool))
                    })
                    .map(|(i, _)| i);
                if let (Some(i), None) = (open.next(), open.next()) {
                    end_failed_tool(inv, i, (tool_code, tool_msg), now, &mut ended);
                }
            }
            // A plugin registered after this one threw in afterToolCallback:
            // this plugin's had completed the call, the last it completed.
            if ended.len() == before && thrown.is_some_and(|e| e.callback == ToolCallback::After) {
                let last = (inv.tools.iter().enumerate())
                    .filter(|(_, t)| t.agent == author && t.callbacks_done)
                    .max_by_key(|(_, t)| t.last_callback)
                    .map(|(i, _)| i);
                if let Some(i) = last {
                    let mut t = inv.tools.remove(i);
                    t.span.error(tool_code, tool_msg);
                    end_agents_under(inv, t.span.id, now, &mut ended);
                    ended.push(t.span.finish(trace_id, now, limit));
                }
            }
            inv.root_error = Some((code, msg));
        }
        let content = match ev.content_json {
            Some(c) => Some(c),
            None if ev.responses_only && inv.capture && !ev.function_responses.is_empty() => {
                Some(responses_content(&ev.function_responses))
            }
            None => None,
        };
        // A model span that no afterModelCallback closed (another plugin's
        // cached beforeModelCallback response) ends with this event.
        // The "only open model span" fallback is for spans whose agent was
        // unknown; an event of another known agent (a parallel branch) must
        // not close a span still waiting for its model.
        // In a streamed run each event of a call's responses is one of them
        // (streamed.rs): one afterModelCallback already gave adds nothing;
        // one it never gave (an earlier plugin answered it) is added.
        let response_event = inv.streams
            && !ev.responses_only
            && ev.function_responses.is_empty()
            && (ev.ends_run.is_some() || ev.has_usage || ev.finish_reason.is_some());
        let response = |content: &Option<String>| ModelResponse {
            partial: false,
            finish_reason: ev.finish_reason.clone(),
            usage: ev.usage,
            error_code: ev.error_code.clone(),
            error_message: ev.error_message.clone(),
            content_json: if inv.capture { content.clone() } else { None },
            has_usage: ev.has_usage,
            yields_event: false,
            ..ModelResponse::default()
        };
        let mut fed_turn = false;
        if response_event {
            let answer = response(&content);
            if let Some((_, turn)) = inv.streamed.iter_mut().find(|(a, _)| a == author) {
                if turn.awaiting_events > 0 {
                    turn.awaiting_events -= 1;
                } else if !turn.finished_by_model() || ev.ends_run.is_none() {
                    // A call that said it was done still closes with usage
                    // alone (ADK's close() after the tools ran).
                    turn.add(answer, now_nanos());
                }
                // Else parts after the call said it was done: not the call's
                // (an event the agent's own callback sends, say).
                fed_turn = true;
            }
        }
        let known_author = inv.tree.contains_key(author) || inv.agent_span_id(author).is_some();
        let pos = (inv.models.iter())
            .position(|(a, _)| a == author)
            .or(match inv.models.as_slice() {
                [(key, _)] if key.is_empty() || !known_author => Some(0),
                _ => None,
            })
            .filter(|_| !fed_turn);
        if let Some(pos) = pos.filter(|_| response_event) {
            // A streamed call's first response, which afterModelCallback
            // never gave: the call may answer again.
            let (key, span) = inv.models.remove(pos);
            let mut turn = StreamedTurn::new(span);
            turn.add(response(&content), now_nanos());
            inv.streamed.push((key, turn));
        } else if let Some(pos) = pos {
            // The event is the response afterModelCallback never saw.
            let (_, mut span) = inv.models.remove(pos);
            let outcome = Outcome {
                finish_reason: ev.finish_reason.as_deref().map(str::to_lowercase),
                usage: ev.usage,
                error: response_error(&ev.error_code, &ev.error_message),
                content: if inv.capture { content.clone() } else { None },
                response_id: None,
                response_model: None,
            };
            outcome.apply(&mut span, inv.capture, limit);
            ended.push(span.finish(inv.trace_id, now_nanos(), limit));
        }
        for fr in ev.function_responses {
            let Some(i) = inv.find_tool_for_response(author, &fr.id, &fr.name) else {
                continue;
            };
            let mut t = inv.tools.remove(i);
            apply_tool_outcome(&mut t, fr.response_json, inv.capture);
            end_agents_under(inv, t.span.id, t.last_callback, &mut ended);
            ended.push(t.span.finish(inv.trace_id, t.last_callback, limit));
        }
        if content.is_some() {
            inv.last_output = content;
        }
        if let (None, None, Some(ends_run)) = (&ev.error_code, &ev.error_message, ev.ends_run) {
            note_run_state(inv, author, ends_run);
        }
        for s in ended {
            self.emit(s);
        }
    }
}
