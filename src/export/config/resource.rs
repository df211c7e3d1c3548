//! The Resource every exported span carries.

use super::headers::parse_key_values;
use super::{var, ConfigError, Env, ExportOptions, PREFIX, SDK_NAME, SDK_VERSION};

/// telemetry.sdk.* plus service.name, the attributes every Resource carries.
pub(super) fn sdk_resource(service_name: String) -> Vec<(String, String)> {
    vec![
        ("service.name".to_string(), service_name),
        ("telemetry.sdk.name".to_string(), SDK_NAME.to_string()),
        ("telemetry.sdk.language".to_string(), "nodejs".to_string()),
        ("telemetry.sdk.version".to_string(), SDK_VERSION.to_string()),
    ]
}

/// The Resource: OTEL_RESOURCE_ATTRIBUTES, then the `resourceAttributes`
/// option over it, then service.name and telemetry.sdk.* (which always win).
/// The Weave entity/project never goes here: it travels as a header.
pub fn resolve_resource(
    options: &ExportOptions,
    env: Env<'_>,
    warnings: &mut Vec<String>,
) -> Result<Vec<(String, String)>, ConfigError> {
    let mut attrs: Vec<(String, String)> = Vec::new();
    let set = |attrs: &mut Vec<(String, String)>, k: String, v: String| {
        attrs.retain(|(name, _)| *name != k);
        attrs.push((k, v));
    };
    if let Some(raw) = var(env, "OTEL_RESOURCE_ATTRIBUTES") {
        let (pairs, bad) = parse_key_values(&raw);
        for (k, v) in pairs {
            set(&mut attrs, k, v);
        }
        if bad > 0 {
            warnings.push(format!(
                "{PREFIX} OTEL_RESOURCE_ATTRIBUTES has {bad} malformed entr{} (expected \
key1=value1,key2=value2); they are ignored.",
                if bad == 1 { "y" } else { "ies" }
            ));
        }
    }
    if let Some(user) = &options.resource_attributes {
        for (k, v) in user {
            if k.is_empty() {
                return Err(ConfigError::Type(format!(
                    "{PREFIX} resourceAttributes keys must be non-empty strings."
                )));
            }
            set(&mut attrs, k.clone(), v.clone());
        }
    }
    let from_attrs = attrs
        .iter()
        .find(|(k, _)| k == "service.name")
        .map(|(_, v)| v.clone());
    // The option, else OTEL_SERVICE_NAME (which beats service.name in
    // OTEL_RESOURCE_ATTRIBUTES, as in every OpenTelemetry SDK).
    let option_name = options
        .service_name
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let user_attr_name = options.resource_attributes.as_ref().and_then(|user| {
        user.iter()
            .rev()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone())
    });
    let service_name = option_name
        .or(user_attr_name)
        .or_else(|| var(env, "OTEL_SERVICE_NAME"))
        .or(from_attrs)
        .unwrap_or_else(|| "unknown_service:node".to_string());
    let sdk = sdk_resource(service_name);
    attrs.retain(|(k, _)| !sdk.iter().any(|(s, _)| s == k));
    let mut out = sdk;
    out.extend(attrs);
    Ok(out)
}
