//! The texts the model reads, byte for byte as every ADK ships them
//! (`/work/shared/specs/retry.md`). `details` and `args` arrive rendered by
//! JavaScript, so they match what a JavaScript implementation would print.

// Each text is a list of fixed pieces around its placeholders. The pieces are
// also handed to JavaScript once (`crate::js::retry::retry_guidance_texts`),
// which joins them per failure: V8 joins strings without copying them, which
// is cheaper than moving a 1.5 KB string across napi for every failure. The
// renderers below are the reference the tests hold both sides to.

/// Retry text pieces around: name, details, args, n, max.
pub const RETRY: [&str; 6] = [
    "The call to tool `",
    "` failed.\n\n**Error Details:**\n```\n",
    "\n```\n\n**Tool Arguments Used:**\n```json\n",
    "\n```\n\n**Reflection Guidance:**\nThis is retry attempt **",
    " of ",
    "**. Analyze the error and the arguments you provided. Do not repeat the exact same call. Consider the following before your next attempt:\n\n1.  **Invalid Parameters**: Does the error suggest that one or more arguments are incorrect, badly formatted, or missing? Review the tool's schema and your arguments.\n2.  **State or Preconditions**: Did a previous step fail or not produce the necessary state/resource for this tool to succeed?\n3.  **Alternative Approach**: Is this the right tool for the job? Could another tool or a different sequence of steps achieve the goal?\n4.  **Simplify the Task**: Can you break the problem down into smaller, simpler steps?\n5.  **Wrong Function Name**: Does the error indicates the tool is not found? Please check again and only use available tools.\n\nFormulate a new plan based on your analysis and try a corrected or different approach.",
];

/// Exceeded text pieces around: name, max, details, args, name.
pub const EXCEEDED: [&str; 6] = [
    "The tool `",
    "` has failed consecutively ",
    " times and the retry limit has been exceeded.\n\n**Last Error:**\n```\n",
    LAST_ARGS,
    FINAL_INSTRUCTION,
    FINAL_TAIL,
];

/// Non-retryable text pieces around: name, details, args, name (the exceeded
/// text with another first line).
pub const NOT_RETRYABLE: [&str; 5] = [
    "The tool `",
    "` failed with an error that retrying cannot fix.\n\n**Last Error:**\n```\n",
    LAST_ARGS,
    FINAL_INSTRUCTION,
    FINAL_TAIL,
];

/// Tool-not-found pieces around: name, the list; then the list separator and
/// the word for an empty list.
pub const TOOL_NOT_FOUND: [&str; 5] = [
    "Invoking `",
    "()` failed as no tool with that name is available. The tools you can call are: ",
    ". You could retry, but it is IMPORTANT that you only call a tool from that list.",
    ", ",
    "none",
];

const LAST_ARGS: &str = "\n```\n\n**Last Arguments Used:**\n```json\n";
const FINAL_INSTRUCTION: &str = "\n```\n\n**Final Instruction:**\n**Do not attempt to use the `";
const FINAL_TAIL: &str = "` tool again for this task.** You must now try a different approach. Acknowledge the failure and devise a new strategy, potentially using other available tools or informing the user that the task cannot be completed.";

/// Joins `pieces` around `values` (one fewer value than pieces).
fn join(pieces: &[&str], values: &[&str]) -> String {
    let len = pieces.iter().chain(values).map(|s| s.len()).sum();
    let mut out = String::with_capacity(len);
    for (i, piece) in pieces.iter().enumerate() {
        out.push_str(piece);
        if let Some(value) = values.get(i) {
            out.push_str(value);
        }
    }
    out
}

/// Guidance for failure `n` of at most `max` (the spec's texts need no
/// trimming: each starts and ends with fixed words).
pub fn retry(name: &str, details: &str, args: &str, n: u64, max: &str) -> String {
    join(&RETRY, &[name, details, args, &n.to_string(), max])
}

/// Guidance once the limit of `max` failures is exceeded.
pub fn exceeded(name: &str, details: &str, args: &str, max: &str) -> String {
    join(&EXCEEDED, &[name, max, details, args, name])
}

/// Guidance for a failure the retry predicate rejected.
pub fn not_retryable(name: &str, details: &str, args: &str) -> String {
    join(&NOT_RETRYABLE, &[name, details, args, name])
}

/// The `error` text for a tool name the agent does not have, once its
/// failures exceed the limit. `available` lists the agent's tools in
/// declaration order.
pub fn tool_not_found<'a>(name: &str, available: impl IntoIterator<Item = &'a str>) -> String {
    let list = available
        .into_iter()
        .collect::<Vec<_>>()
        .join(TOOL_NOT_FOUND[3]);
    let list = if list.is_empty() {
        TOOL_NOT_FOUND[4]
    } else {
        &list
    };
    join(&TOOL_NOT_FOUND[..3], &[name, list])
}

#[cfg(test)]
mod tests {
    use super::*;

    // The spec's own texts, copied from retry.md with their placeholders.
    const SPEC_RETRY: &str = include_str!("spec_texts/retry.txt");
    const SPEC_EXCEEDED: &str = include_str!("spec_texts/exceeded.txt");

    fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
        let mut out = template.to_owned();
        for (key, value) in pairs {
            out = out.replace(key, value);
        }
        out
    }

    const ARGS: &str = "{\n  \"city\": \"Paris\"\n}";

    #[test]
    fn retry_text_is_the_spec_text() {
        let got = retry("get_weather", "Error: boom", ARGS, 2, "3");
        let want = fill(
            SPEC_RETRY,
            &[
                ("<name>", "get_weather"),
                ("<details>", "Error: boom"),
                ("<args>", ARGS),
                ("<n>", "2"),
                ("<max>", "3"),
            ],
        );
        assert_eq!(got, want);
        assert!(got.starts_with(
            "The call to tool `get_weather` failed.\n\n**Error Details:**\n```\nError: boom\n```\n"
        ));
        assert!(got.contains("This is retry attempt **2 of 3**."));
        assert!(got.contains("\n1.  **Invalid Parameters**"));
        assert!(got.contains("Does the error indicates the tool is not found?"));
        assert!(got.ends_with("try a corrected or different approach."));
        assert_eq!(got, got.trim());
    }

    #[test]
    fn exceeded_text_is_the_spec_text() {
        let got = exceeded("get_weather", "Error: boom", ARGS, "3");
        let want = fill(
            SPEC_EXCEEDED,
            &[
                ("<name>", "get_weather"),
                ("<details>", "Error: boom"),
                ("<args>", ARGS),
                ("<max>", "3"),
            ],
        );
        assert_eq!(got, want);
        assert!(got.starts_with(
            "The tool `get_weather` has failed consecutively 3 times and the retry limit has been exceeded.\n"
        ));
        assert!(
            got.contains("**Do not attempt to use the `get_weather` tool again for this task.**")
        );
        assert_eq!(got, got.trim());
    }

    #[test]
    fn not_retryable_text_replaces_the_first_line_only() {
        let got = not_retryable("t", "E: x", "{}");
        let exceeded = exceeded("t", "E: x", "{}", "3");
        let (first, rest) = got.split_once('\n').expect("two lines");
        assert_eq!(
            first,
            "The tool `t` failed with an error that retrying cannot fix."
        );
        assert_eq!(Some(rest), exceeded.split_once('\n').map(|(_, r)| r));
    }

    #[test]
    fn substitutions_are_verbatim() {
        // Nothing in details or args is escaped or interpreted.
        let got = retry("a`b", "x <max> {}\n```", "[\n  1\n]", 10, "12");
        assert!(got.contains("x <max> {}\n```\n```"));
        assert!(got.contains("**10 of 12**"));
        assert!(got.contains("`a`b`"));
    }

    #[test]
    fn tool_not_found_lists_tools_in_order() {
        assert_eq!(
            tool_not_found("get_wether", ["get_weather", "get_time"]),
            "Invoking `get_wether()` failed as no tool with that name is available. The tools you can call are: get_weather, get_time. You could retry, but it is IMPORTANT that you only call a tool from that list."
        );
    }

    #[test]
    fn tool_not_found_without_tools_says_none() {
        assert_eq!(
            tool_not_found("ghost", []),
            "Invoking `ghost()` failed as no tool with that name is available. The tools you can call are: none. You could retry, but it is IMPORTANT that you only call a tool from that list."
        );
    }
}
