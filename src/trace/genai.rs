//! GenAI semantic-convention message JSON, built from the raw JSON of ADK
//! `Content` objects captured on the JavaScript thread. Runs lazily (see
//! `span::DeferredValue`) so the JavaScript thread only pays for one copy.

use super::span::DeferredValue;

use super::genai_render::render_str;
pub use super::genai_render::MessageShape;

/// A message attribute rendered on first use.
#[derive(Debug)]
pub struct DeferredMessages {
    /// The captured JSON text.
    pub raw: String,
    pub shape: MessageShape,
    pub limit: Option<usize>,
}

impl DeferredValue for DeferredMessages {
    fn render(&self) -> String {
        let out = match self.shape {
            // The same agent sends the same instruction and tools on every
            // model call: remember the last few renderings.
            MessageShape::SystemInstructions | MessageShape::ToolDefinitions => {
                recent::render(&self.raw, &self.shape, render_str)
            }
            _ => render_str(&self.raw, &self.shape),
        };
        truncate(out, self.limit)
    }
}

/// A JSON value from JavaScript's JSON text (lone surrogate escapes read
/// as U+FFFD, which serde_json would refuse); `None` when it is not JSON.
pub fn parse_lenient(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(&super::genai_render::readable_surrogates(text)).ok()
}

/// A tiny per-thread cache of recent renderings (bounded: a few entries of
/// small inputs), keyed by shape and the exact captured text.
mod recent {
    use super::MessageShape;
    use std::cell::RefCell;

    const ENTRIES: usize = 8;
    const MAX_INPUT: usize = 16 * 1024;

    thread_local! {
        static RECENT: RefCell<Vec<(bool, String, String)>> = const { RefCell::new(Vec::new()) };
    }

    pub fn render(
        raw: &str,
        shape: &MessageShape,
        fresh: fn(&str, &MessageShape) -> String,
    ) -> String {
        let tools = matches!(shape, MessageShape::ToolDefinitions);
        if raw.len() > MAX_INPUT {
            return fresh(raw, shape);
        }
        let hit = RECENT.with(|r| {
            let r = r.borrow();
            r.iter()
                .find(|(t, k, _)| *t == tools && k == raw)
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
            r.push((tools, raw.to_owned(), v.clone()));
        });
        v
    }
}

/// Truncates to at most `limit` characters (OTel attribute length limit).
pub fn truncate(mut s: String, limit: Option<usize>) -> String {
    if let Some(limit) = limit {
        cut_to(&mut s, limit);
    }
    s
}

/// Cuts `s` to its first `limit` characters (the limit counts characters,
/// not bytes), letting go of the memory past them.
pub fn cut_to(s: &mut String, limit: usize) {
    if let Some((at, _)) = s.char_indices().nth(limit) {
        s.truncate(at);
        s.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn input_list_maps_roles_and_parts() {
        let raw = r#"[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"AAA"}}]},
            {"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1},"id":"c1"}},{"text":"t","thought":true},{"executableCode":{}}]},
            {"parts":[{"functionResponse":{"name":"f"}}]}]"#;
        let out: Value = serde_json::from_str(&render_str(raw, &MessageShape::InputList)).unwrap();
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
        let out = render_str(
            r#"{"parts":[{"functionCall":{}}]}"#,
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
        let s = render_str(r#""be nice""#, &MessageShape::SystemInstructions);
        assert_eq!(s, r#"[{"type":"text","content":"be nice"}]"#);
        let c = render_str(
            r#"{"role":"system","parts":[{"text":"a"}]}"#,
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
        let tools = r#"[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"OBJECT"}}]},{"googleSearch":{}}]"#;
        let v: Value =
            serde_json::from_str(&render_str(tools, &MessageShape::ToolDefinitions)).unwrap();
        assert_eq!(
            v,
            json!([{"name":"f","description":"d","parameters":{"type":"OBJECT"},"type":"function"}])
        );
        assert_eq!(render_str("[]", &MessageShape::ToolDefinitions), "[]");
    }

    #[test]
    fn cached_renderings_keep_shape_and_limit_apart() {
        let raw = r#"[{"functionDeclarations":[{"name":"f"}]},"be nice"]"#.to_string();
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
                let full = render_str(&raw, &shape);
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
        assert_eq!(render_str("not json", &MessageShape::InputList), "[]");
    }
}
