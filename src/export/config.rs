//! Which exporter a TracingPlugin uses and where it sends spans, from the
//! user's options and the standard OpenTelemetry environment (api.md).
//!
//! Options are the user's own words: a bad one is an error at construction.
//! The environment may be shared by many programs: a bad variable there is a
//! warning and its default applies.

mod batch;
mod headers;
mod resource;
mod urls;

pub use headers::parse_key_values;
pub use resource::resolve_resource;
pub use urls::{display_url, join_path, redact_userinfo};

use crate::trace::sink::SinkWarning;
use batch::{resolve_batch, resolve_transport};
use headers::{base_headers, resolve_weave};
use resource::sdk_resource;
use std::fmt;
use std::sync::Arc;
use urls::{check_url, compresses_by_default, query_values};

/// The package version, reported as `telemetry.sdk.version`.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");
/// `telemetry.sdk.name` and the instrumentation scope name.
pub const SDK_NAME: &str = "adk-native-plugins";
pub const DEFAULT_WEAVE_BASE_URL: &str = "https://trace.wandb.ai";
/// The OpenTelemetry default for OTLP/HTTP traces.
pub const DEFAULT_OTLP_ENDPOINT: &str = "http://localhost:4318/v1/traces";
pub const DEFAULT_MAX_QUEUE_SIZE: usize = 2048;
pub const DEFAULT_MAX_EXPORT_BATCH_SIZE: usize = 512;
pub const DEFAULT_SCHEDULED_DELAY_MILLIS: u64 = 5000;
pub const DEFAULT_EXPORT_TIMEOUT_MILLIS: u64 = 30000;
/// One HTTP attempt, when OTEL_EXPORTER_OTLP_TIMEOUT is unset (its default).
pub const DEFAULT_REQUEST_TIMEOUT_MILLIS: u64 = 10000;

/// The exporter-related options of `new TracingPlugin(options)`, as read from
/// JavaScript by the napi layer (`None` = option not given).
#[derive(Clone, Default)]
pub struct ExportOptions {
    pub exporter: Option<String>,
    pub endpoint: Option<String>,
    pub headers: Option<Vec<(String, String)>>,
    pub weave: Option<WeaveOptions>,
    pub service_name: Option<String>,
    pub resource_attributes: Option<Vec<(String, String)>>,
    pub batch: BatchOptions,
}

#[derive(Clone, Default)]
pub struct WeaveOptions {
    pub project: String,
    pub api_key: Option<String>,
    pub base_url: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct BatchOptions {
    pub max_queue_size: Option<u32>,
    pub max_export_batch_size: Option<u32>,
    pub scheduled_delay_millis: Option<u32>,
    pub export_timeout_millis: Option<u32>,
}

/// Receives the exporter's warnings on the exporter thread (the napi layer
/// forwards them to `process.emitWarning`).
pub type WarningHook = Arc<dyn Fn(SinkWarning) + Send + Sync>;

/// Everything the OTLP exporter needs, fully resolved.
#[derive(Clone, Default)]
pub struct OtlpConfig {
    pub endpoint: String,
    /// Sent with every request. May hold secrets: never printed.
    pub headers: Vec<(String, String)>,
    /// The whole Resource: service.name, telemetry.sdk.*, user attributes.
    pub resource_attributes: Vec<(String, String)>,
    pub max_queue_size: usize,
    pub max_export_batch_size: usize,
    pub scheduled_delay_millis: u64,
    pub export_timeout_millis: u64,
    /// The variable that set `export_timeout_millis` below the option's
    /// (OTEL_EXPORTER_OTLP_TIMEOUT bounds each batch export), for warnings.
    pub export_timeout_from_env: Option<&'static str>,
    /// Bound of one HTTP attempt (the batch's budget bounds it too).
    pub request_timeout_millis: u64,
    /// gzip the request body: OTEL_EXPORTER_OTLP_COMPRESSION, else for a
    /// collector on another machine only (`compresses_by_default`).
    pub gzip: bool,
    /// First retry delay; later ones grow x2 up to `retry_max_backoff_millis`.
    pub retry_initial_backoff_millis: u64,
    pub retry_max_backoff_millis: u64,
    /// Strings that must never appear in a warning (API keys); header values
    /// are always redacted too.
    pub secrets: Vec<String>,
    /// Problems found while resolving the environment, for `process.emitWarning`.
    pub warnings: Vec<String>,
    /// Where the exporter's warnings go; `None` keeps them for `take_warnings`.
    pub on_warning: Option<WarningHook>,
}

impl OtlpConfig {
    /// A config with every default and the given endpoint (tests, embedders).
    pub fn with_endpoint(endpoint: &str) -> Self {
        OtlpConfig {
            endpoint: endpoint.to_string(),
            resource_attributes: sdk_resource("unknown_service:node".into()),
            max_queue_size: DEFAULT_MAX_QUEUE_SIZE,
            max_export_batch_size: DEFAULT_MAX_EXPORT_BATCH_SIZE,
            scheduled_delay_millis: DEFAULT_SCHEDULED_DELAY_MILLIS,
            export_timeout_millis: DEFAULT_EXPORT_TIMEOUT_MILLIS,
            request_timeout_millis: DEFAULT_REQUEST_TIMEOUT_MILLIS,
            gzip: compresses_by_default(endpoint),
            retry_initial_backoff_millis: 1000,
            retry_max_backoff_millis: 5000,
            ..Default::default()
        }
    }
}

const REDACTED: &str = "[redacted]";

// Hand-written Debug impls: the derived ones would print API keys.
impl fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, _)| (k.as_str(), REDACTED))
            .collect();
        f.debug_struct("OtlpConfig")
            .field("endpoint", &self.endpoint)
            .field("headers", &headers)
            .field("resource_attributes", &self.resource_attributes)
            .field("max_queue_size", &self.max_queue_size)
            .field("max_export_batch_size", &self.max_export_batch_size)
            .field("scheduled_delay_millis", &self.scheduled_delay_millis)
            .field("export_timeout_millis", &self.export_timeout_millis)
            .field("request_timeout_millis", &self.request_timeout_millis)
            .field("gzip", &self.gzip)
            .field("warnings", &self.warnings)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for WeaveOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeaveOptions")
            .field("project", &self.project)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("base_url", &self.base_url)
            .finish()
    }
}

impl fmt::Debug for ExportOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Option<Vec<&str>> = self
            .headers
            .as_ref()
            .map(|h| h.iter().map(|(k, _)| k.as_str()).collect());
        f.debug_struct("ExportOptions")
            .field("exporter", &self.exporter)
            .field("endpoint", &self.endpoint)
            .field("header_names", &headers)
            .field("weave", &self.weave)
            .field("service_name", &self.service_name)
            .field("resource_attributes", &self.resource_attributes)
            .field("batch", &self.batch)
            .finish()
    }
}

#[derive(Clone, Debug)]
pub enum ExporterChoice {
    /// Nothing is exported; `warning` says why when the user should know.
    None {
        warning: Option<NoExportWarning>,
    },
    /// `warning`: OTLP was listed too but cannot be used.
    Console {
        warning: Option<NoExportWarning>,
    },
    Memory,
    Otlp(Box<OtlpConfig>),
    /// `OTEL_TRACES_EXPORTER` lists both: every span goes to each.
    ConsoleAndOtlp(Box<OtlpConfig>),
}

/// Why nothing is exported, and the kind of problem: tracing.md warns
/// "once per process for each kind of problem", whatever value caused it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoExportWarning {
    pub kind: NoExportKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoExportKind {
    /// Neither an option nor the environment names an exporter.
    NothingConfigured,
    /// `OTEL_TRACES_EXPORTER` names an exporter this package lacks.
    UnsupportedExporter,
    /// The environment's OTLP endpoint is not a usable URL.
    BadEndpoint,
    /// The OTLP exporter could not start (its thread).
    StartFailed,
}

impl NoExportKind {
    /// The name lib/tracing.js keys its once-per-process warning by.
    pub fn as_str(self) -> &'static str {
        match self {
            NoExportKind::NothingConfigured => "nothing configured",
            NoExportKind::UnsupportedExporter => "unsupported exporter",
            NoExportKind::BadEndpoint => "bad endpoint",
            NoExportKind::StartFailed => "start failed",
        }
    }
}

impl NoExportWarning {
    pub fn new(kind: NoExportKind, text: String) -> Self {
        NoExportWarning { kind, text }
    }
}

/// A bad option: `Type` becomes a JavaScript `TypeError`, `Plain` an `Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    Type(String),
    Plain(String),
}

const PREFIX: &str = "TracingPlugin:";

const HOW_TO_CONFIGURE: &str = "pass `exporter` ('otlp', 'console', 'memory' or 'none'), \
`endpoint` (an OTLP/HTTP traces URL) or `weave: { project: 'entity/project' }` to \
new TracingPlugin(), or set OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT \
or OTEL_TRACES_EXPORTER";

pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// An environment variable, with an empty value treated as unset.
fn var(env: Env<'_>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The variables `attribute_value_limit` reads, first one first.
pub const VALUE_LIMIT_VARS: [&str; 2] = [
    "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
];

/// The attribute value length limit, OpenTelemetry's span limit rule:
/// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else
/// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, counted in characters. Every exporter
/// gets spans cut by it (the span model cuts them as they end). `Err` holds
/// the warning for a value that is not a whole number: nothing is cut then.
pub fn attribute_value_limit(env: Env<'_>) -> Result<Option<usize>, String> {
    let Some((name, v)) = VALUE_LIMIT_VARS
        .iter()
        .find_map(|name| var(env, name).map(|v| (name, v)))
    else {
        return Ok(None);
    };
    v.parse::<usize>().map(Some).map_err(|_| {
        format!("{PREFIX} {name}='{v}' is not a whole number; attribute values are not cut.")
    })
}

/// Resolves the options against the environment (`env` looks a variable up).
pub fn resolve(options: &ExportOptions, env: Env<'_>) -> Result<ExporterChoice, ConfigError> {
    let exporter = options.exporter.as_deref();
    if let Some(e) = exporter {
        if !matches!(e, "otlp" | "console" | "memory" | "none") {
            return Err(ConfigError::Type(format!(
                "{PREFIX} unknown exporter '{e}': use 'otlp', 'console', 'memory' or 'none'."
            )));
        }
    }
    let has_target = options.endpoint.is_some() || options.weave.is_some();
    if let Some(e) = exporter.filter(|e| *e != "otlp" && has_target) {
        let what = if options.endpoint.is_some() {
            "endpoint"
        } else {
            "weave"
        };
        return Err(ConfigError::Type(format!(
            "{PREFIX} exporter '{e}' cannot be combined with the `{what}` option: \
`{what}` sends spans over OTLP; drop `exporter` or set it to 'otlp'."
        )));
    }
    if options.endpoint.is_some() && options.weave.is_some() {
        return Err(ConfigError::Type(format!(
            "{PREFIX} `endpoint` and `weave` cannot both be given: `weave` picks the W&B \
Weave endpoint itself; pass one of them."
        )));
    }
    // Checked whatever the exporter, so a typo never hides behind 'none'.
    let batch = resolve_batch(&options.batch, env)?;
    let env_listed = env_exporter(env);
    let mut warnings = batch.warnings.clone();

    match exporter {
        Some("memory") => return Ok(ExporterChoice::Memory),
        Some("console") => return Ok(ExporterChoice::Console { warning: None }),
        Some("none") => return Ok(ExporterChoice::None { warning: None }),
        _ => {}
    }

    let (endpoint, mut headers, mut secrets) = if let Some(weave) = &options.weave {
        let (endpoint, weave_headers, key) = resolve_weave(weave, env)?;
        // As for an explicit endpoint (api.md), and as the OpenTelemetry JS
        // exporter under Weave's own plugin does: the `headers` option, else
        // the environment's; Weave's authentication wins a clash.
        let mut headers = base_headers(options, env, &mut warnings)?;
        for (k, v) in weave_headers {
            headers.retain(|(name, _)| !name.eq_ignore_ascii_case(&k));
            headers.push((k, v));
        }
        (endpoint, headers, vec![key])
    } else if let Some(endpoint) = &options.endpoint {
        check_url(endpoint, "endpoint").map_err(ConfigError::Type)?;
        let headers = base_headers(options, env, &mut warnings)?;
        (endpoint.clone(), headers, Vec::new())
    } else {
        let explicit_otlp = exporter == Some("otlp");
        if !explicit_otlp {
            match &env_listed {
                EnvExporter::Otlp | EnvExporter::ConsoleAndOtlp => {}
                EnvExporter::Console => return Ok(ExporterChoice::Console { warning: None }),
                EnvExporter::None => return Ok(ExporterChoice::None { warning: None }),
                EnvExporter::Unsupported(v) => {
                    return Ok(ExporterChoice::None {
                        warning: Some(NoExportWarning::new(
                            NoExportKind::UnsupportedExporter,
                            format!(
                                "{PREFIX} OTEL_TRACES_EXPORTER='{v}' is not supported (use otlp, \
console or none); no spans are exported."
                            ),
                        )),
                    })
                }
                EnvExporter::Unset => {}
            }
        }
        let explicitly_on =
            explicit_otlp || matches!(env_listed, EnvExporter::Otlp | EnvExporter::ConsoleAndOtlp);
        let endpoint = match env_endpoint(env) {
            Some(Ok(url)) => url,
            // The message is a sentence of its own.
            Some(Err(msg)) if env_listed == EnvExporter::ConsoleAndOtlp => {
                return Ok(ExporterChoice::Console {
                    warning: Some(NoExportWarning::new(
                        NoExportKind::BadEndpoint,
                        format!("{msg} Spans are only printed (console), not sent over OTLP."),
                    )),
                });
            }
            Some(Err(msg)) => {
                return Ok(ExporterChoice::None {
                    warning: Some(NoExportWarning::new(
                        NoExportKind::BadEndpoint,
                        format!("{msg} No spans are exported."),
                    )),
                });
            }
            None if explicitly_on => DEFAULT_OTLP_ENDPOINT.to_string(),
            None => {
                return Ok(ExporterChoice::None {
                    warning: Some(NoExportWarning::new(
                        NoExportKind::NothingConfigured,
                        format!(
                            "{PREFIX} no exporter is configured, so no spans are exported: \
{HOW_TO_CONFIGURE}."
                        ),
                    )),
                })
            }
        };
        let headers = base_headers(options, env, &mut warnings)?;
        (endpoint, headers, Vec::new())
    };
    // Header values are secrets too (an `Authorization` from the environment),
    // and so are the endpoint's query values (`?token=…`): a collector's error
    // body may echo the request line.
    for (_, v) in &headers {
        secrets.push(v.clone());
    }
    secrets.extend(query_values(&endpoint));
    headers.retain(|(k, _)| !k.is_empty());

    for name in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(p) = var(env, name) {
            if p != "http/protobuf" {
                warnings.push(format!(
                    "{PREFIX} {name}='{p}' is not supported; spans are sent as http/protobuf."
                ));
            }
            break;
        }
    }
    let resource_attributes = resolve_resource(options, env, &mut warnings)?;
    let (env_timeout, gzip) = resolve_transport(env, &endpoint, &mut warnings);
    // OTEL_EXPORTER_OTLP_TIMEOUT is the most an exporter waits for each batch
    // export (the OpenTelemetry specification), retries included: within
    // exportTimeoutMillis, which bounds the batch processor's export.
    let request_timeout_millis = env_timeout.map_or(DEFAULT_REQUEST_TIMEOUT_MILLIS, |(t, _)| t);
    let (export_timeout_millis, export_timeout_from_env) = match env_timeout {
        Some((t, name)) if t < batch.export_timeout_millis => (t, Some(name)),
        _ => (batch.export_timeout_millis, None),
    };
    // Only the environment lists exporters: options name one.
    let with_console = options.weave.is_none()
        && options.endpoint.is_none()
        && exporter != Some("otlp")
        && env_listed == EnvExporter::ConsoleAndOtlp;
    let config = Box::new(OtlpConfig {
        endpoint,
        headers,
        resource_attributes,
        max_queue_size: batch.max_queue_size,
        max_export_batch_size: batch.max_export_batch_size,
        scheduled_delay_millis: batch.scheduled_delay_millis,
        export_timeout_millis,
        export_timeout_from_env,
        request_timeout_millis,
        gzip,
        retry_initial_backoff_millis: 1000,
        retry_max_backoff_millis: 5000,
        secrets,
        warnings,
        on_warning: None,
    });
    Ok(if with_console {
        ExporterChoice::ConsoleAndOtlp(config)
    } else {
        ExporterChoice::Otlp(config)
    })
}

#[derive(Debug, PartialEq, Eq)]
enum EnvExporter {
    Unset,
    Otlp,
    Console,
    ConsoleAndOtlp,
    None,
    Unsupported(String),
}

/// OTEL_TRACES_EXPORTER: a comma-separated list of exporters, each of which
/// gets every span (as the OpenTelemetry SDKs read it); values this package
/// lacks are skipped while one it has is listed.
fn env_exporter(env: Env<'_>) -> EnvExporter {
    let Some(raw) = var(env, "OTEL_TRACES_EXPORTER") else {
        return EnvExporter::Unset;
    };
    let values: Vec<String> = raw
        .split(',')
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .collect();
    let listed = |name: &str| values.iter().any(|v| v == name);
    match (listed("console"), listed("otlp")) {
        (true, true) => return EnvExporter::ConsoleAndOtlp,
        (true, false) => return EnvExporter::Console,
        (false, true) => return EnvExporter::Otlp,
        (false, false) => {}
    }
    if listed("none") {
        EnvExporter::None
    } else {
        EnvExporter::Unsupported(raw)
    }
}

/// The traces URL from the environment: the signal-specific one verbatim,
/// else the base one plus `/v1/traces`.
fn env_endpoint(env: Env<'_>) -> Option<Result<String, String>> {
    if let Some(url) = var(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Some(
            check_url(&url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                .map(|_| url)
                .map_err(|e| e.to_string()),
        );
    }
    let base = var(env, "OTEL_EXPORTER_OTLP_ENDPOINT")?;
    Some(
        check_url(&base, "OTEL_EXPORTER_OTLP_ENDPOINT")
            .map(|_| join_path(&base, "v1/traces"))
            .map_err(|e| e.to_string()),
    )
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
