//! The request headers: the `headers` option or the environment's OTLP
//! headers, and Weave's endpoint, authorization and project header.

use super::urls::{check_url, join_path};
use super::{var, ConfigError, Env, ExportOptions, WeaveOptions, DEFAULT_WEAVE_BASE_URL, PREFIX};
use base64::Engine as _;

pub(super) type Headers = Vec<(String, String)>;

/// Endpoint, headers and API key for `weave`.
pub(super) fn resolve_weave(
    weave: &WeaveOptions,
    env: Env<'_>,
) -> Result<(String, Headers, String), ConfigError> {
    let project = weave.project.trim();
    if project.is_empty() {
        return Err(ConfigError::Type(format!(
            "{PREFIX} weave.project must be a non-empty 'entity/project' string."
        )));
    }
    // It travels as the project_id header: a value HTTP refuses would fail
    // every export, so it is refused here, where the user wrote it.
    if check_header("project_id", project).is_err() {
        return Err(ConfigError::Type(format!(
            "{PREFIX} weave.project must be an 'entity/project' string without control characters."
        )));
    }
    let key = weave
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .or_else(|| var(env, "WANDB_API_KEY"))
        .ok_or_else(|| {
            ConfigError::Plain(format!(
                "{PREFIX} weave export needs a W&B API key: pass weave: {{ project, apiKey }} \
or set the WANDB_API_KEY environment variable (keys are at https://wandb.ai/authorize)."
            ))
        })?;
    let base = weave
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .unwrap_or(DEFAULT_WEAVE_BASE_URL);
    check_url(base, "weave.baseUrl").map_err(ConfigError::Type)?;
    let endpoint = join_path(base, "agents/otel/v1/traces");
    let token = base64::engine::general_purpose::STANDARD.encode(format!("api:{key}"));
    let headers = vec![
        ("Authorization".to_string(), format!("Basic {token}")),
        ("project_id".to_string(), project.to_string()),
    ];
    Ok((endpoint, headers, key))
}

/// The `headers` option, else the environment's OTLP headers.
pub(super) fn base_headers(
    options: &ExportOptions,
    env: Env<'_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, String)>, ConfigError> {
    if let Some(headers) = &options.headers {
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in headers {
            check_header(k, v).map_err(ConfigError::Type)?;
            out.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
            out.push((k.clone(), v.clone()));
        }
        return Ok(out);
    }
    let mut out: Vec<(String, String)> = Vec::new();
    // The signal-specific variable wins key by key.
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        let Some(raw) = var(env, name) else { continue };
        let (pairs, bad) = parse_key_values(&raw);
        let mut skipped = bad;
        for (k, v) in pairs {
            if check_header(&k, &v).is_err() {
                skipped += 1;
                continue;
            }
            out.retain(|(n, _)| !n.eq_ignore_ascii_case(&k));
            out.push((k, v));
        }
        if skipped > 0 {
            warnings.push(format!(
                "{PREFIX} {name} has {skipped} malformed entr{} (expected \
key1=value1,key2=value2 with URL-encoded values); they are ignored.",
                if skipped == 1 { "y" } else { "ies" }
            ));
        }
    }
    Ok(out)
}

/// A header name/value HTTP accepts; the message never shows the value.
pub(super) fn check_header(name: &str, value: &str) -> Result<(), String> {
    let name_ok = ureq::http::HeaderName::from_bytes(name.as_bytes()).is_ok();
    let value_ok = ureq::http::HeaderValue::from_str(value).is_ok();
    if !name_ok {
        return Err(format!(
            "{PREFIX} '{name}' is not a valid HTTP header name."
        ));
    }
    if !value_ok {
        return Err(format!(
            "{PREFIX} the value of header '{name}' is not a valid HTTP header value \
(control characters or non-ASCII text)."
        ));
    }
    Ok(())
}

/// `k=v,k2=v2` with URL-encoded keys and values (W3C Baggage-like, as the
/// OTel environment variables use). Returns the pairs and how many were malformed.
pub fn parse_key_values(raw: &str) -> (Vec<(String, String)>, usize) {
    let mut pairs = Vec::new();
    let mut bad = 0;
    for item in raw.split(',') {
        if item.trim().is_empty() {
            continue;
        }
        match item.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let decode = |s: &str| {
                    percent_encoding::percent_decode_str(s.trim())
                        .decode_utf8_lossy()
                        .into_owned()
                };
                pairs.push((decode(k), decode(v)));
            }
            _ => bad += 1,
        }
    }
    (pairs, bad)
}
