//! Failures of tool handling as ADK reports them after the fact, read back
//! so a tool span comes out the same whichever order the plugins run in.
//!
//! ADK 2.0.0's PluginManager stops at the first plugin callback that throws
//! and rethrows its error as `Error in plugin '<p>' during '<callback>'
//! callback: <String(error)>`; a plugin registered after the thrower never
//! sees the callback. A name the model invented throws `Function <name> is
//! not found in the toolsDict.`. Both reach `onModelErrorCallback` (also
//! while a streamed turn is still open: tools run inside its loop) and an
//! error event of the agent. Past its limit, ReflectAndRetryToolPlugin
//! answers an invented name with `{ error: "Invoking `<name>()` failed as no
//! tool with that name is available. …" }` (retry.md), which stops the chain
//! before this plugin's `onToolErrorCallback` when registered first.

use crate::retry::guidance::TOOL_NOT_FOUND;
use memchr::memmem::Finder;
use serde_json::Value;
use std::sync::LazyLock;

// Built once, as attributes.rs's: every tool result is looked through.
static AFTER_NAME_FINDER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(TOOL_NOT_FOUND[1]));

/// Which tool callback a plugin's error came from.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum ToolCallback {
    Before,
    After,
    OnError,
}

/// A plugin's tool-callback error, unwrapped: the thrown error's name and
/// message (`String(error)` is `<name>: <message>` for an Error).
#[derive(Debug, PartialEq, Eq)]
pub struct PluginToolError<'a> {
    pub callback: ToolCallback,
    pub error_type: &'a str,
    pub message: &'a str,
}

/// The tool-callback error a PluginManager error message wraps, if it is one.
pub fn plugin_tool_error(message: &str) -> Option<PluginToolError<'_>> {
    let rest = message.strip_prefix("Error in plugin '")?;
    let (_, rest) = rest.split_once("' during '")?;
    let (callback, thrown) = rest.split_once("' callback: ")?;
    let callback = match callback {
        "beforeToolCallback" => ToolCallback::Before,
        "afterToolCallback" => ToolCallback::After,
        "onToolErrorCallback" => ToolCallback::OnError,
        _ => return None,
    };
    let (error_type, message) = match thrown.split_once(": ") {
        Some((name, text)) if is_error_name(name) => (name, text),
        // `String(error)` of an Error without a message; a bare word alone
        // may as well be a thrown string.
        _ if is_error_name(thrown) && thrown.ends_with("Error") => (thrown, ""),
        _ => ("Error", thrown),
    };
    // An Error without a message shows its name, as a span's message.
    let message = if message.is_empty() {
        error_type
    } else {
        message
    };
    Some(PluginToolError {
        callback,
        error_type,
        message,
    })
}

/// Whether `name` can be an Error's name as `String(error)` shows it.
fn is_error_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Whether an error that reached `onModelErrorCallback` came from handling
/// the model's tool calls, not from the model.
pub fn is_tool_failure(message: &str) -> bool {
    plugin_tool_error(message).is_some()
        || (message.starts_with("Function ")
            && message.ends_with(" is not found in the toolsDict."))
}

/// ADK's own message for `tool`, when `response_json` is the retry plugin's
/// answer to that invented name past its limit (its text: the retry
/// engine's TOOL_NOT_FOUND pieces).
pub fn not_found_answer(tool: &str, response_json: &str) -> Option<String> {
    let [before_name, after_name, ..] = TOOL_NOT_FOUND;
    // Most results are not: skip parsing them.
    AFTER_NAME_FINDER.find(response_json.as_bytes())?;
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(response_json) else {
        return None;
    };
    let text = match (map.len(), map.get("error")) {
        (1, Some(Value::String(text))) => text,
        _ => return None,
    };
    let named = text.strip_prefix(before_name)?.strip_prefix(tool)?;
    named
        .starts_with(after_name)
        .then(|| format!("Function {tool} is not found in the toolsDict."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_the_plugin_managers_tool_callback_errors() {
        let e = plugin_tool_error(
            "Error in plugin 'reflect_retry_tool_plugin' during 'onToolErrorCallback' callback: Error: Error in tool 'flaky': nope",
        )
        .unwrap();
        assert_eq!(
            e,
            PluginToolError {
                callback: ToolCallback::OnError,
                error_type: "Error",
                message: "Error in tool 'flaky': nope"
            }
        );
        let e = plugin_tool_error(
            "Error in plugin 'p' during 'afterToolCallback' callback: TypeError: bad: worse",
        )
        .unwrap();
        assert_eq!(
            (e.callback, e.error_type, e.message),
            (ToolCallback::After, "TypeError", "bad: worse")
        );
        let e = plugin_tool_error(
            "Error in plugin 'p' during 'beforeToolCallback' callback: RangeError",
        )
        .unwrap();
        assert_eq!(
            (e.callback, e.error_type, e.message),
            (ToolCallback::Before, "RangeError", "RangeError")
        );
        // A thrown string: no name to read.
        let e = plugin_tool_error(
            "Error in plugin 'p' during 'afterToolCallback' callback: it broke, sorry",
        )
        .unwrap();
        assert_eq!((e.error_type, e.message), ("Error", "it broke, sorry"));
        let e = plugin_tool_error("Error in plugin 'p' during 'afterToolCallback' callback: boom");
        assert_eq!(
            e.map(|e| (e.error_type, e.message)),
            Some(("Error", "boom"))
        );
    }

    #[test]
    fn other_errors_are_not_tool_failures() {
        assert!(plugin_tool_error(
            "Error in plugin 'p' during 'beforeModelCallback' callback: Error: x"
        )
        .is_none());
        assert!(plugin_tool_error("Error in tool 'flaky': nope").is_none());
        assert!(!is_tool_failure(
            "Error in plugin 'p' during 'afterModelCallback' callback: Error: x"
        ));
        assert!(!is_tool_failure("quota exceeded"));
        assert!(is_tool_failure(
            "Function ghost is not found in the toolsDict."
        ));
        assert!(is_tool_failure(
            "Error in plugin 'p' during 'onToolErrorCallback' callback: Error: x"
        ));
    }

    #[test]
    fn recognises_the_retry_plugins_answer_to_an_invented_name() {
        let answer = r#"{"error":"Invoking `ghost()` failed as no tool with that name is available. The tools you can call are: a, b. You could retry, but it is IMPORTANT that you only call a tool from that list."}"#;
        assert_eq!(
            not_found_answer("ghost", answer).as_deref(),
            Some("Function ghost is not found in the toolsDict.")
        );
        // Another tool's name, more keys, or another shape: a plain result.
        assert_eq!(not_found_answer("other", answer), None);
        let more = answer.replacen('{', r#"{"x":1,"#, 1);
        assert_eq!(not_found_answer("ghost", &more), None);
        assert_eq!(not_found_answer("ghost", r#"{"result":"ok"}"#), None);
        assert_eq!(
            not_found_answer(
                "ghost",
                "not json failed as no tool with that name is available."
            ),
            None
        );
    }
}
