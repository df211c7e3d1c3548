//! GenAI semantic-convention message JSON, built from the raw JSON of ADK
//! `Content` objects captured on the JavaScript thread. Runs lazily (see
//! `span::DeferredValue`) so the JavaScript thread only pays for one copy.

use super::span::DeferredValue;
use serde_json::{json, Map, Value};

pub use super::genai_fast::MessageShape;

/// A message attribute rendered on first use.
#[derive(Debug)]
pub struct DeferredMessages {
    /// UTF-8 JSON text (validated when parsed, off the JavaScript thread).
    pub raw: Vec<u8>,
    pub shape: MessageShape,
    pub limit: Option<usize>,
}

impl DeferredValue for DeferredMessages {
    fn render(&self) -> String {
        let out = match self.shape {
            // The same agent sends the same instruction and tools on every
            // model call: remember the last few renderings.
            MessageShape::SystemInstructions | MessageShape::ToolDefinitions => {
                recent::render(&self.raw, &self.shape, render_fresh)
            }
            _ => render_fresh(&self.raw, &self.shape),
        };
        truncate(out, self.limit)
    }
}

pub(crate) fn render_fresh(raw: &[u8], shape: &MessageShape) -> String {
    super::genai_fast::render(raw, shape).unwrap_or_else(|| render_messages(raw, shape))
}

/// A tiny per-thread cache of recent renderings (bounded: a few entries of
/// small inputs), keyed by shape and the exact captured bytes.
mod recent {
    use super::MessageShape;
    use std::cell::RefCell;

    const ENTRIES: usize = 8;
    const MAX_INPUT: usize = 16 * 1024;

    thread_local! {
        static RECENT: RefCell<Vec<(bool, Vec<u8>, String)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn render(
        raw: &[u8],
        shape: &MessageShape,
        fresh: fn(&[u8], &MessageShape) -> String,
    ) -> String {
        let tools = matches!(shape, MessageShape::ToolDefinitions);
        if raw.len() > MAX_INPUT {
            return fresh(raw, shape);
        }
        let hit = RECENT.with(|r| {
            let r = r.borrow();
            r.iter()
                .find(|(t, k, _)| *t == tools && k.as_slice() == raw)
                .map(|(_, _, v)| v.clone())
        });
        if let Some(v) = hit {
            return v;
        }
        let v = fresh(raw, shape);
        RECENT.with(|r| {
            let mut r = r.borrow_mut();
            if r.len() >= ENTRIES {
                r.remove(0);
            }
            r.push((tools, raw.to_vec(), v.clone()));
        });
        v
    }
}

/// Truncates to at most `limit` characters (OTel attribute length limit).
pub fn truncate(s: String, limit: Option<usize>) -> String {
    match limit {
        Some(limit) => match s.char_indices().nth(limit) {
            Some((cut, _)) => s[..cut].to_string(),
            None => s,
        },
        None => s,
    }
}

/// The reference rendering (through `serde_json::Value`); `genai_fast`
/// renders the common cases the same, faster.
pub fn render_messages(raw: &[u8], shape: &MessageShape) -> String {
    // Unparseable input (should not happen: JavaScript made it) is `null`.
    let value: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    let out = match shape {
        MessageShape::InputList => {
            let list = match value {
                Value::Array(items) => items,
                Value::Null => Vec::new(),
                other => vec![other],
            };
            Value::Array(list.iter().map(|c| message(c, None)).collect())
        }
        MessageShape::InputOne => Value::Array(vec![message(&value, None)]),
        MessageShape::OutputOne { finish_reason } => {
            Value::Array(vec![message(&value, Some(finish_reason))])
        }
        MessageShape::SystemInstructions => Value::Array(system_parts(&value)),
        MessageShape::ToolDefinitions => {
            return tool_definitions(&value).unwrap_or_else(|| "[]".into());
        }
    };
    out.to_string()
}

fn message(content: &Value, finish_reason: Option<&str>) -> Value {
    let role = match content.get("role").and_then(Value::as_str) {
        Some("model") => "assistant".to_string(),
        Some(r) => r.to_string(),
        None if finish_reason.is_some() => "assistant".to_string(),
        None => String::new(),
    };
    let parts: Vec<Value> = content
        .get("parts")
        .and_then(Value::as_array)
        .map(|ps| ps.iter().filter_map(part).collect())
        .unwrap_or_default();
    let mut m = Map::new();
    m.insert("role".into(), Value::String(role));
    m.insert("parts".into(), Value::Array(parts));
    if let Some(fr) = finish_reason {
        m.insert("finish_reason".into(), Value::String(fr.to_string()));
    }
    Value::Object(m)
}

fn str_or_empty(v: Option<&Value>) -> Value {
    Value::String(v.and_then(Value::as_str).unwrap_or("").to_string())
}

fn object_or_empty(v: Option<&Value>) -> Value {
    match v {
        Some(Value::Null) | None => json!({}),
        Some(other) => other.clone(),
    }
}

/// One GenAI part, or `None` for part kinds the conventions do not cover.
pub fn part(p: &Value) -> Option<Value> {
    if let Some(d) = p.get("inlineData").filter(|d| d.is_object()) {
        return Some(json!({"type": "blob", "mime_type": str_or_empty(d.get("mimeType"))}));
    }
    if let Some(fc) = p.get("functionCall").filter(|d| d.is_object()) {
        return Some(json!({
            "type": "tool_call",
            "id": str_or_empty(fc.get("id")),
            "name": str_or_empty(fc.get("name")),
            "arguments": object_or_empty(fc.get("args")),
        }));
    }
    if let Some(fr) = p.get("functionResponse").filter(|d| d.is_object()) {
        return Some(json!({
            "type": "tool_call_response",
            "id": str_or_empty(fr.get("id")),
            "response": object_or_empty(fr.get("response")),
        }));
    }
    // A thought part carries its text in `text` too: it is a text part.
    if let Some(t) = p.get("text").and_then(Value::as_str) {
        return Some(json!({"type": "text", "content": t}));
    }
    None
}

fn system_parts(v: &Value) -> Vec<Value> {
    match v {
        Value::String(s) => vec![json!({"type": "text", "content": s})],
        Value::Array(items) => items.iter().flat_map(system_parts).collect(),
        Value::Object(o) if o.contains_key("parts") => o
            .get("parts")
            .and_then(Value::as_array)
            .map(|ps| ps.iter().filter_map(part).collect())
            .unwrap_or_default(),
        Value::Object(_) => part(v).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// `gen_ai.tool.definitions` from the JSON of `config.tools`.
pub fn tool_definitions(tools: &Value) -> Option<String> {
    let mut defs = Vec::new();
    for tool in tools.as_array()? {
        let Some(decls) = tool.get("functionDeclarations").and_then(Value::as_array) else {
            continue;
        };
        for d in decls {
            let parameters = d
                .get("parameters")
                .or_else(|| d.get("parametersJsonSchema"))
                .cloned()
                .unwrap_or_else(|| json!({}));
            defs.push(json!({
                "name": str_or_empty(d.get("name")),
                "description": str_or_empty(d.get("description")),
                "parameters": parameters,
                "type": "function",
            }));
        }
    }
    if defs.is_empty() {
        None
    } else {
        Some(Value::Array(defs).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_list_maps_roles_and_parts() {
        let raw = r#"[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"AAA"}}]},
            {"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1},"id":"c1"}},{"text":"t","thought":true},{"executableCode":{}}]},
            {"parts":[{"functionResponse":{"name":"f"}}]}]"#;
        let out: Value =
            serde_json::from_str(&render_messages(raw.as_bytes(), &MessageShape::InputList))
                .unwrap();
        assert_eq!(
            out,
            json!([
                {"role":"user","parts":[{"type":"text","content":"hi"},{"type":"blob","mime_type":"image/png"}]},
                {"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","arguments":{"a":1}},{"type":"text","content":"t"}]},
                {"role":"","parts":[{"type":"tool_call_response","id":"","response":{}}]}
            ])
        );
    }

    #[test]
    fn output_has_finish_reason_and_default_role() {
        let out = render_messages(
            br#"{"parts":[{"functionCall":{}}]}"#,
            &MessageShape::OutputOne {
                finish_reason: "stop".into(),
            },
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            json!([{"role":"assistant","parts":[{"type":"tool_call","id":"","name":"","arguments":{}}],"finish_reason":"stop"}])
        );
    }

    #[test]
    fn system_instructions_from_string_and_content() {
        let s = render_messages(br#""be nice""#, &MessageShape::SystemInstructions);
        assert_eq!(s, r#"[{"type":"text","content":"be nice"}]"#);
        let c = render_messages(
            br#"{"role":"system","parts":[{"text":"a"}]}"#,
            &MessageShape::SystemInstructions,
        );
        assert_eq!(c, r#"[{"type":"text","content":"a"}]"#);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo".into(), Some(2)), "hé");
        assert_eq!(truncate("hi".into(), Some(5)), "hi");
        assert_eq!(truncate("hi".into(), None), "hi");
    }

    #[test]
    fn tool_definitions_shape() {
        let tools = json!([{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"OBJECT"}}]},{"googleSearch":{}}]);
        let v: Value = serde_json::from_str(&tool_definitions(&tools).unwrap()).unwrap();
        assert_eq!(
            v,
            json!([{"name":"f","description":"d","parameters":{"type":"OBJECT"},"type":"function"}])
        );
        assert_eq!(tool_definitions(&json!([])), None);
    }

    #[test]
    fn cached_renderings_keep_shape_and_limit_apart() {
        let raw = br#"[{"functionDeclarations":[{"name":"f"}]},"be nice"]"#.to_vec();
        let d = |shape: MessageShape, limit| DeferredMessages {
            raw: raw.clone(),
            shape,
            limit,
        };
        for _ in 0..3 {
            for shape in [
                MessageShape::SystemInstructions,
                MessageShape::ToolDefinitions,
            ] {
                let full = render_messages(&raw, &shape);
                assert_eq!(d(shape.clone(), None).render(), full);
                assert_eq!(d(shape.clone(), Some(5)).render(), truncate(full, Some(5)));
            }
        }
        assert_ne!(
            d(MessageShape::SystemInstructions, None).render(),
            d(MessageShape::ToolDefinitions, None).render()
        );
    }

    #[test]
    fn garbage_is_null_safe() {
        assert_eq!(render_messages(b"not json", &MessageShape::InputList), "[]");
    }
}
