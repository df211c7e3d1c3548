//! The reference rendering of GenAI message JSON, through
//! `serde_json::Value`: slow and plain, kept for the tests only, which check
//! the one production renderer (`genai_render`) against it.

use super::genai::MessageShape;
use serde_json::{json, Map, Value};

/// The reference rendering of `raw` as `shape`.
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
            let given = |k: &str| d.get(k).filter(|v| !v.is_null());
            let parameters = given("parameters")
                .or_else(|| given("parametersJsonSchema"))
                .cloned()
                .unwrap_or(Value::Null);
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

/// True when `serde_json` would write this (valid) JSON text back unchanged
/// after reading it into a `Value`: no whitespace outside strings, only the
/// escapes it writes itself, numbers it prints the same way.
pub fn canonical(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return false,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => match b.get(i + 1) {
                            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                            Some(b'u') if control_escape(b.get(i + 2..i + 6)) => i += 6,
                            _ => return false,
                        },
                        Some(_) => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if !canonical_number(&s[start..i]) {
                    return false;
                }
            }
            b' ' | b'\n' | b'\r' | b'\t' => return false,
            _ => i += 1,
        }
    }
    true
}

/// `\u00XX` for a control character serde_json writes that way (lower-case
/// hex; not one of \b \t \n \f \r, which it writes short).
fn control_escape(hex: Option<&[u8]>) -> bool {
    let Some([b'0', b'0', hi @ (b'0' | b'1'), lo]) = hex else {
        return false;
    };
    let lo_ok = lo.is_ascii_digit() || (b'a'..=b'f').contains(lo);
    lo_ok && !(*hi == b'0' && matches!(lo, b'8' | b'9' | b'a' | b'c' | b'd'))
}

fn canonical_number(tok: &str) -> bool {
    let is_int = !tok.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
    if is_int {
        let digits = tok.trim_start_matches('-');
        return digits.len() <= 18 && tok != "-0";
    }
    // Floats: only when serde_json prints back exactly this text.
    serde_json::from_str::<serde_json::Value>(tok)
        .ok()
        .and_then(|v| serde_json::to_string(&v).ok())
        .is_some_and(|back| back == tok)
}
