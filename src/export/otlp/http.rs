//! One OTLP/HTTP POST and what its answer means for the batch. Blocking
//! (ureq, rustls with ring): it only ever runs on the exporter thread.

use super::encode::Body;
use super::http_date::parse_http_date;
use crate::export::config::{OtlpConfig, SDK_NAME, SDK_VERSION};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What one attempt came to.
#[derive(Debug)]
pub enum Outcome {
    /// 2xx: the collector has the spans. Never sent again.
    Delivered { body: Vec<u8> },
    /// 429/502/503/504 or a network failure: worth another try.
    Retryable {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Any other answer (500, 4xx, 3xx): the batch is dropped.
    Rejected { status: u16, body: String },
    /// A failure retrying cannot fix (TLS, a malformed request).
    Failed { reason: String },
}

pub struct Transport {
    agent: ureq::Agent,
    endpoint: String,
    headers: Vec<(String, String)>,
}

const ERROR_BODY_LIMIT: u64 = 4096;
const OK_BODY_LIMIT: u64 = 64 * 1024;

impl Transport {
    pub fn new(config: &OtlpConfig) -> Self {
        let agent = ureq::Agent::config_builder()
            // Statuses are answers to classify, not errors.
            .http_status_as_error(false)
            // A redirected POST would lose its body: report the 3xx instead.
            .max_redirects(0)
            .user_agent(format!("{SDK_NAME}/{SDK_VERSION}"))
            .build()
            .new_agent();
        Transport {
            agent,
            endpoint: config.endpoint.clone(),
            // The body's own headers are ours to set: a user's copy would
            // duplicate or contradict them.
            headers: config
                .headers
                .iter()
                .filter(|(k, _)| {
                    !["content-type", "content-encoding", "content-length", "host"]
                        .iter()
                        .any(|p| k.eq_ignore_ascii_case(p))
                })
                .cloned()
                .collect(),
        }
    }

    /// POSTs `body`; the whole attempt (connect, send, answer) is bounded by `timeout`.
    pub fn send(&self, body: &Body, timeout: Duration) -> Outcome {
        let mut request = self
            .agent
            .post(&self.endpoint)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .header("Content-Type", "application/x-protobuf");
        if body.gzipped {
            request = request.header("Content-Encoding", "gzip");
        }
        for (k, v) in &self.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let mut response = match request.send(&body.bytes[..]) {
            Ok(r) => r,
            Err(e) => return classify_error(&e),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let is_protobuf = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("protobuf"));
        let limit = if (200..300).contains(&status) {
            OK_BODY_LIMIT
        } else {
            ERROR_BODY_LIMIT
        };
        // A body we cannot read whole still leaves the status to go by.
        let bytes = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .unwrap_or_default();
        match status {
            // Only a protobuf answer can carry a partial success we can read.
            200..=299 if is_protobuf => Outcome::Delivered { body: bytes },
            200..=299 => Outcome::Delivered { body: Vec::new() },
            429 | 502 | 503 | 504 => Outcome::Retryable {
                reason: format!("HTTP {status}"),
                retry_after,
            },
            _ => Outcome::Rejected {
                status,
                body: one_line(&bytes),
            },
        }
    }
}

fn classify_error(e: &ureq::Error) -> Outcome {
    use ureq::Error as E;
    match e {
        // rustls reports handshake and certificate failures as InvalidData:
        // trying again cannot fix them.
        E::Io(io) if io.kind() == std::io::ErrorKind::InvalidData => Outcome::Failed {
            reason: format!("TLS or protocol error ({io})"),
        },
        E::Io(io) => Outcome::Retryable {
            reason: format!("connection error ({})", io.kind()),
            retry_after: None,
        },
        E::Timeout(_) => Outcome::Retryable {
            reason: "timed out".into(),
            retry_after: None,
        },
        E::HostNotFound => Outcome::Retryable {
            reason: "host not found".into(),
            retry_after: None,
        },
        E::ConnectionFailed | E::Protocol(_) => Outcome::Retryable {
            reason: format!("connection error ({e})"),
            retry_after: None,
        },
        // ureq's messages name the problem, never header values.
        other => Outcome::Failed {
            reason: other.to_string(),
        },
    }
}

/// The start of an error body, on one line, for a warning.
/// A collector's answer on one line. Whole: a warning quoting it scrubs
/// secrets before it cuts (`Warnings::quote`).
fn one_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `Retry-After`: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let at = parse_http_date(value, now)?;
    Some(Duration::from_secs(at.saturating_sub(now)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // Sun, 06 Nov 1994 08:49:30 GMT
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        // A date in the past means "now".
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
        // RFC 9110's two older forms, which a recipient must accept too.
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sun Nov  6 08:49:37 1994", now),
            Some(Duration::from_secs(7))
        );
    }

    #[test]
    fn answers_are_one_line() {
        assert_eq!(one_line(b"  bad\n\n request "), "bad request");
    }
}
