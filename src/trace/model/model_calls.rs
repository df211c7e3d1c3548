//! Model calls: a `chat` span per agent, from the request (history
//! deferred, config cached) to the response or the error.

use super::{non_empty, Tracer};
use crate::trace::attributes::deferred;
use crate::trace::genai::MessageShape;
use crate::trace::history::DeferredHistory;
use crate::trace::inputs::*;
use crate::trace::key_text::display;
use crate::trace::open_span::OpenSpan;
use crate::trace::span::{now_nanos, AttributeValue};
use crate::trace::streamed::{response_error, Outcome, StreamedTurn};
use crate::trace::tool_failure::is_tool_failure;
use std::sync::Arc;

impl Tracer {
    /// Returns false when a history delta could not be applied (the
    /// JavaScript side then starts that conversation again in full).
    pub fn before_model(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        mut req: ModelRequest,
    ) -> bool {
        // A delta updates its conversation whatever becomes of the span, so
        // both sides keep holding the same items.
        let mut history = None;
        let mut applied = true;
        if let (Some(delta), Some(suffix)) = (req.history, req.contents_json.as_deref()) {
            history = self.histories.apply(delta, suffix.as_bytes());
            applied = history.is_some();
            req.contents_json = None;
        }
        let Some(parent) = self.ensure_agent(inv_id, agent) else {
            return applied;
        };
        let span_id = self.ids.span_id();
        let Some(inv) = self.open.get_mut(inv_id) else {
            return applied;
        };
        let key = agent.unwrap_or("").to_string();
        let limit = inv.limit;
        let model = non_empty(&req.model).unwrap_or("unknown").to_string();
        let mut span = OpenSpan::new(span_id, Some(parent), format!("chat {model}"), now_nanos());
        inv.common(&mut span, "chat");
        span.set_str("gen_ai.request.model", model);
        if !key.is_empty() {
            span.set_str("gen_ai.agent.name", display(&key));
        }
        if let Some(cfg) = req.config_json.as_deref() {
            for (key, value) in self.configs.attributes(cfg) {
                span.set(key, value.clone());
            }
        }
        if let Some(t) = req.tools_json {
            span.set(
                "gen_ai.tool.definitions",
                deferred(t, MessageShape::ToolDefinitions, limit),
            );
        }
        if inv.capture {
            if let Some(s) = req.system_json {
                span.set(
                    "gen_ai.system_instructions",
                    deferred(s, MessageShape::SystemInstructions, limit),
                );
            }
            if let Some(c) = req.contents_json {
                span.set(
                    "gen_ai.input.messages",
                    deferred(c, MessageShape::InputList, limit),
                );
            } else if let Some(pieces) = history {
                span.set(
                    "gen_ai.input.messages",
                    AttributeValue::Deferred(Arc::new(DeferredHistory { pieces, limit })),
                );
            }
        }
        let previous = match inv.models.iter().position(|(a, _)| *a == key) {
            Some(pos) => Some(inv.models.remove(pos).1.finish(
                inv.trace_id,
                now_nanos(),
                inv.limit,
            )),
            None => None,
        };
        // The agent's next model call: its streamed previous one is over.
        let previous_turn = match inv.streamed.iter().position(|(a, _)| *a == key) {
            Some(pos) => Some(inv.streamed.remove(pos).1.finish(
                inv.trace_id,
                inv.capture,
                limit,
                None,
            )),
            None => None,
        };
        inv.models.push((key, span));
        for p in previous.into_iter().chain(previous_turn) {
            self.emit(p);
        }
        applied
    }

    pub fn after_model(&mut self, inv_id: &str, agent: Option<&str>, resp: ModelResponse) {
        if resp.partial {
            return;
        }
        let key = agent.unwrap_or("");
        let Some(inv) = self.inv(inv_id) else { return };
        let now = now_nanos();
        if inv.streams {
            // The call may answer again: collect until it is over.
            if let Some(pos) = inv.models.iter().position(|(a, _)| a == key) {
                let (key, span) = inv.models.remove(pos);
                let mut turn = StreamedTurn::new(span);
                turn.awaiting_events += u32::from(resp.yields_event);
                turn.add(resp, now);
                inv.streamed.push((key, turn));
            } else if let Some((_, turn)) = inv.streamed.iter_mut().find(|(a, _)| a == key) {
                turn.awaiting_events += u32::from(resp.yields_event);
                turn.add(resp, now);
            }
            return;
        }
        let Some(pos) = inv.models.iter().position(|(a, _)| a == key) else {
            return;
        };
        let (_, mut span) = inv.models.remove(pos);
        let outcome = Outcome {
            finish_reason: resp.finish_reason.as_deref().map(str::to_lowercase),
            usage: resp.usage,
            error: response_error(&resp.error_code, &resp.error_message),
            content: resp.content_json,
            response_id: resp.response_id,
            response_model: resp.response_model,
        };
        outcome.apply(&mut span, inv.capture, inv.limit);
        let data = span.finish(inv.trace_id, now, inv.limit);
        self.emit(data);
    }

    pub fn model_error(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        error_type: &str,
        message: &str,
    ) {
        // A failed tool call, reported as the model's: in a streamed turn
        // tools run inside the model's loop, which is still open; a call
        // that does not stream has ended by then, and ends the same.
        if is_tool_failure(message) {
            return;
        }
        let key = agent.unwrap_or("");
        let Some(inv) = self.inv(inv_id) else { return };
        let data = if let Some(pos) = inv.models.iter().position(|(a, _)| a == key) {
            let (_, mut span) = inv.models.remove(pos);
            span.error(error_type, message);
            span.finish(inv.trace_id, now_nanos(), inv.limit)
        } else if let Some(pos) = inv.streamed.iter().position(|(a, _)| a == key) {
            // A streamed call that failed after some responses.
            let (_, mut turn) = inv.streamed.remove(pos);
            turn.fail(error_type, message, now_nanos());
            turn.finish(inv.trace_id, inv.capture, inv.limit, None)
        } else {
            return;
        };
        self.emit(data);
    }
}
