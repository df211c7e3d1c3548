//! Tool calls: an `execute_tool` span per call, keyed by function call id
//! (or a synthetic key), ended by the response event the model sees.

use super::Tracer;
use crate::trace::agents::end_agents_under;
use crate::trace::key_text::display;
use crate::trace::open_span::{OpenSpan, ToolSpan};
use crate::trace::span::now_nanos;

impl Tracer {
    pub fn before_tool(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        args_json: Option<String>,
    ) {
        let Some(parent) = self.ensure_agent(inv_id, agent) else {
            return;
        };
        let span_id = self.ids.span_id();
        let Some(inv) = self.open.get_mut(inv_id) else {
            return;
        };
        let call_id = call_id.filter(|c| !c.is_empty());
        let keyed = call_id.is_some_and(|id| {
            !inv.tools
                .iter()
                .any(|t| t.keyed && t.call_id.as_deref() == Some(id))
        });
        let now = now_nanos();
        let shown = display(tool);
        let mut span = OpenSpan::new(span_id, Some(parent), format!("execute_tool {shown}"), now);
        inv.common(&mut span, "execute_tool");
        span.set_str("gen_ai.tool.name", shown);
        if let Some(a) = agent.filter(|a| !a.is_empty()) {
            span.set_str("gen_ai.agent.name", display(a));
        }
        if let Some(id) = call_id {
            span.set_str("gen_ai.tool.call.id", display(id));
        }
        if inv.capture {
            if let Some(a) = args_json {
                span.set_str("gen_ai.tool.call.arguments", a);
            }
        }
        inv.tools.push(ToolSpan {
            span,
            agent: agent.unwrap_or("").to_string(),
            tool: tool.to_string(),
            call_id: call_id.map(str::to_string),
            keyed,
            callbacks_done: false,
            last_callback: now,
            errored: false,
            seen_result: None,
            seen_token: 0,
        });
    }

    pub fn tool_error(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        error_type: &str,
        message: &str,
    ) {
        let Some(inv) = self.inv(inv_id) else { return };
        let Some(i) = inv.find_tool_for_callback(agent.unwrap_or(""), tool, call_id) else {
            return;
        };
        let t = &mut inv.tools[i];
        t.span.error(error_type, message);
        t.errored = true;
        t.last_callback = now_nanos();
    }

    /// `held`: the JavaScript side's handle of the result afterToolCallback
    /// saw (0: none). `supply_seen` brings its JSON only for a span no
    /// function response event ended (the event, when it comes, wins), so
    /// the usual path does not stringify a result twice. `answered`: that
    /// result is a ReflectAndRetryToolPlugin answer to a thrown error (its
    /// type and details): the call failed, as onToolErrorCallback would have
    /// said had the retry plugin, registered first, not answered before
    /// this one saw it; the error stays whatever later replaces the answer.
    pub fn after_tool(
        &mut self,
        inv_id: &str,
        agent: Option<&str>,
        tool: &str,
        call_id: Option<&str>,
        held: u32,
        answered: Option<(String, String)>,
    ) {
        let Some(inv) = self.inv(inv_id) else { return };
        let Some(i) = inv.find_tool_for_callback(agent.unwrap_or(""), tool, call_id) else {
            return;
        };
        let t = &mut inv.tools[i];
        t.callbacks_done = true;
        t.last_callback = now_nanos();
        if let Some((error_type, message)) = answered.filter(|_| !t.errored) {
            t.span.error(&error_type, &message);
            t.errored = true;
        }
        if held != 0 {
            t.seen_result = None;
            t.seen_token = held;
        }
        // The call is done, and so is any agent outside the tree it ran (its
        // span ends at this callback, whenever its response event comes):
        // the turn's next call running that agent gets a span of its own.
        let (span_id, end) = (t.span.id, t.last_callback);
        let mut ended = Vec::new();
        end_agents_under(inv, span_id, end, &mut ended);
        for s in ended {
            self.emit(s);
        }
    }

    /// The JSON of the held result `token`, for its span if no function
    /// response event ended it (lib/tracing.js supplies the results it
    /// still holds as an invocation ends).
    pub fn supply_seen(&mut self, inv_id: &str, token: u32, result_json: String) {
        if token == 0 {
            return;
        }
        let Some(inv) = self.open.get_mut(inv_id) else {
            return;
        };
        if let Some(t) = inv.tools.iter_mut().find(|t| t.seen_token == token) {
            t.seen_result = Some(result_json);
        }
    }
}
