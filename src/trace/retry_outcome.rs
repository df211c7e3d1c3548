//! Recognises a ReflectAndRetryToolPlugin function response and tells its
//! outcome apart. The first line of `reflection_guidance` differs per
//! outcome (retry.md): "The call to tool …" (retry), "… has failed
//! consecutively … the retry limit has been exceeded." (exceeded), "… failed
//! with an error that retrying cannot fix." (non_retryable).

use serde_json::Value;

pub const RESPONSE_TYPE: &str = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN";

#[derive(Debug, PartialEq)]
pub struct RetryDetails {
    pub error_type: String,
    pub details: String,
    pub count: i64,
    pub outcome: &'static str,
}

pub fn retry_details(response: &Value) -> Option<RetryDetails> {
    if response.get("response_type").and_then(Value::as_str) != Some(RESPONSE_TYPE) {
        return None;
    }
    let error_type = response
        .get("error_type")
        .and_then(Value::as_str)
        .unwrap_or("Error")
        .to_string();
    let details = match response.get("error_details") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => error_type.clone(),
        Some(other) => other.to_string(),
    };
    let count = response
        .get("retry_count")
        .and_then(Value::as_f64)
        .map(|f| f as i64)
        .unwrap_or(0);
    let guidance = response
        .get("reflection_guidance")
        .and_then(Value::as_str)
        .unwrap_or("");
    let first = guidance.lines().next().unwrap_or("");
    let outcome = if first.contains("retrying cannot fix") {
        "non_retryable"
    } else if first.contains("retry limit has been exceeded") {
        "exceeded"
    } else if first.starts_with("The call to tool") {
        "retry"
    } else if count == 0 {
        // Unknown wording: a count of 0 is only ever given to non-retryable.
        "non_retryable"
    } else {
        "retry"
    };
    Some(RetryDetails {
        error_type,
        details,
        count,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resp(first_line: &str, count: i64) -> Value {
        json!({"response_type": RESPONSE_TYPE, "error_type": "ValueError", "error_details": "boom",
               "retry_count": count, "reflection_guidance": format!("{first_line}\n\nmore")})
    }

    #[test]
    fn outcomes_from_the_guidance_first_line() {
        let r = retry_details(&resp("The call to tool `t` failed.", 1)).unwrap();
        assert_eq!(
            (r.outcome, r.count, r.error_type.as_str()),
            ("retry", 1, "ValueError")
        );
        let e = retry_details(&resp(
            "The tool `t` has failed consecutively 3 times and the retry limit has been exceeded.",
            3,
        ))
        .unwrap();
        assert_eq!(e.outcome, "exceeded");
        let n = retry_details(&resp(
            "The tool `t` failed with an error that retrying cannot fix.",
            0,
        ))
        .unwrap();
        assert_eq!(n.outcome, "non_retryable");
        assert!(retry_details(&json!({"result": 1})).is_none());
    }
}
