//! The JSON of a string system instruction, kept for the next model call:
//! an agent sends the same instruction on every call, and escaping it again
//! was about a tenth of the tracing thread's time in scripted runs.

/// A longer instruction is not kept (at most one copy of each side).
const MAX_KEPT: usize = 64 * 1024;

#[derive(Debug, Default)]
pub struct SystemJson {
    last: Option<(String, String)>,
}

impl SystemJson {
    /// The JSON string literal of `text`.
    pub fn of(&mut self, text: String) -> String {
        if let Some((last, json)) = &self.last {
            if *last == text {
                return json.clone();
            }
        }
        // Writing a string into a Vec cannot fail.
        let json = serde_json::to_string(&text).unwrap_or_default();
        if text.len() <= MAX_KEPT {
            self.last = Some((text, json.clone()));
        }
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_instruction_gets_its_own_json_whether_kept_or_not() {
        let mut cache = SystemJson::default();
        let long = "\u{e9}\"".repeat(MAX_KEPT);
        for text in [
            "be brief",
            "be brief",
            "say \"hi\"\n",
            "be brief",
            &long,
            &long,
            "",
        ] {
            assert_eq!(
                cache.of(text.to_string()),
                serde_json::to_string(text).unwrap()
            );
        }
        // The long one was not kept: the last kept one still answers.
        assert_eq!(cache.last.as_ref().map(|(t, _)| t.as_str()), Some(""));
    }
}
