//! The batch processor's sizes and delays, and the transport's timeout and
//! compression: options first, then the OTEL_BSP_* and OTEL_EXPORTER_OTLP_*
//! variables, then OpenTelemetry's defaults.

use super::urls::compresses_by_default;
use super::{
    var, BatchOptions, ConfigError, Env, DEFAULT_EXPORT_TIMEOUT_MILLIS,
    DEFAULT_MAX_EXPORT_BATCH_SIZE, DEFAULT_MAX_QUEUE_SIZE, DEFAULT_REQUEST_TIMEOUT_MILLIS,
    DEFAULT_SCHEDULED_DELAY_MILLIS, PREFIX,
};

pub(super) struct Batch {
    pub(super) max_queue_size: usize,
    pub(super) max_export_batch_size: usize,
    pub(super) scheduled_delay_millis: u64,
    pub(super) export_timeout_millis: u64,
    pub(super) warnings: Vec<String>,
}

pub(super) fn resolve_batch(options: &BatchOptions, env: Env<'_>) -> Result<Batch, ConfigError> {
    let mut warnings = Vec::new();
    let mut pick = |option: Option<u32>,
                    option_name: &str,
                    env_name: &str,
                    default: u64,
                    min: u64|
     -> Result<u64, ConfigError> {
        if let Some(v) = option {
            if u64::from(v) < min {
                return Err(ConfigError::Type(format!(
                    "{PREFIX} batch.{option_name} must be a whole number >= {min}, got {v}."
                )));
            }
            return Ok(u64::from(v));
        }
        let Some(raw) = var(env, env_name) else {
            return Ok(default);
        };
        match raw.parse::<u64>() {
            Ok(v) if v >= min => Ok(v),
            _ => {
                warnings.push(format!(
                    "{PREFIX} {env_name}='{raw}' is not a whole number >= {min}; using {default}."
                ));
                Ok(default)
            }
        }
    };
    let max_queue_size = pick(
        options.max_queue_size,
        "maxQueueSize",
        "OTEL_BSP_MAX_QUEUE_SIZE",
        DEFAULT_MAX_QUEUE_SIZE as u64,
        1,
    )?;
    let max_export_batch_size = pick(
        options.max_export_batch_size,
        "maxExportBatchSize",
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
        DEFAULT_MAX_EXPORT_BATCH_SIZE as u64,
        1,
    )?;
    let scheduled_delay_millis = pick(
        options.scheduled_delay_millis,
        "scheduledDelayMillis",
        "OTEL_BSP_SCHEDULE_DELAY",
        DEFAULT_SCHEDULED_DELAY_MILLIS,
        0,
    )?;
    let export_timeout_millis = pick(
        options.export_timeout_millis,
        "exportTimeoutMillis",
        "OTEL_BSP_EXPORT_TIMEOUT",
        DEFAULT_EXPORT_TIMEOUT_MILLIS,
        1,
    )?;
    if options.max_export_batch_size.is_some()
        && options.max_queue_size.is_some()
        && max_export_batch_size > max_queue_size
    {
        return Err(ConfigError::Type(format!(
            "{PREFIX} batch.maxExportBatchSize ({max_export_batch_size}) must not exceed \
batch.maxQueueSize ({max_queue_size})."
        )));
    }
    // A batch never holds more than the queue can: cap it quietly otherwise.
    let max_export_batch_size = max_export_batch_size.min(max_queue_size);
    Ok(Batch {
        max_queue_size: usize::try_from(max_queue_size).unwrap_or(usize::MAX),
        max_export_batch_size: usize::try_from(max_export_batch_size).unwrap_or(usize::MAX),
        scheduled_delay_millis,
        export_timeout_millis,
        warnings,
    })
}

/// The export timeout the environment sets, with the variable's name, and
/// compression (unset: `compresses_by_default(endpoint)`).
pub(super) fn resolve_transport(
    env: Env<'_>,
    endpoint: &str,
    warnings: &mut Vec<String>,
) -> (Option<(u64, &'static str)>, bool) {
    let mut timeout = None;
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ] {
        if let Some(raw) = var(env, name) {
            match raw.parse::<u64>() {
                Ok(v) if v > 0 => timeout = Some((v, name)),
                _ => warnings.push(format!(
                    "{PREFIX} {name}='{raw}' is not a whole number of milliseconds > 0; \
using {DEFAULT_REQUEST_TIMEOUT_MILLIS}."
                )),
            }
            break;
        }
    }
    let default_gzip = compresses_by_default(endpoint);
    let mut gzip = default_gzip;
    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
        "OTEL_EXPORTER_OTLP_COMPRESSION",
    ] {
        if let Some(raw) = var(env, name) {
            match raw.to_ascii_lowercase().as_str() {
                "gzip" => gzip = true,
                "none" => gzip = false,
                _ => warnings.push(format!(
                    "{PREFIX} {name}='{raw}' is not supported (gzip or none); using {}.",
                    if default_gzip {
                        "gzip"
                    } else {
                        "none (the collector is on this machine)"
                    }
                )),
            }
            break;
        }
    }
    (timeout, gzip)
}
