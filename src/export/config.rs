//! Which exporter a TracingPlugin uses and where it sends spans, from the
//! user's options and the standard OpenTelemetry environment (api.md).
//!
//! Options are the user's own words: a bad one is an error at construction.
//! The environment may be shared by many programs: a bad variable there is a
//! warning and its default applies.

use crate::trace::sink::SinkWarning;
use base64::Engine as _;
use std::fmt;
use std::sync::Arc;

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

/// `base` + `/` + `path`, never with a doubled slash.
pub fn join_path(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// An absolute http(s) URL with a host, or a message naming `what`.
fn check_url(url: &str, what: &str) -> Result<(), String> {
    let bad = || {
        format!(
            "{PREFIX} {what} '{}' is not an http:// or https:// URL.",
            redact_userinfo(url)
        )
    };
    let uri: ureq::http::Uri = url.parse().map_err(|_| bad())?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http") | Some("https"));
    let host_ok = uri.host().is_some_and(|h| !h.is_empty());
    // A port past 65535 parses here (as no port); WHATWG URL refuses it.
    let port_ok = uri.authority().is_none_or(|a| port_fits(a.as_str()));
    if scheme_ok && host_ok && port_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Whether an authority's port, if it has one, is a port number.
fn port_fits(authority: &str) -> bool {
    // After any `user:password@`, whose colon is not a port's.
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host_end = authority.rfind(']').unwrap_or(0);
    match authority[host_end..].rfind(':') {
        Some(i) => {
            let port = &authority[host_end + i + 1..];
            port.is_empty() || port.parse::<u16>().is_ok()
        }
        None => true,
    }
}

/// A URL for messages: no `user:password@`, no query or fragment (either
/// may carry a token).
pub fn display_url(url: &str) -> String {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    redact_userinfo(&url[..cut])
}

/// A URL with any `user:password@` part replaced, for messages.
pub fn redact_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}://{REDACTED}@{}", &url[..scheme_end], &rest[at + 1..]),
        None => url.to_string(),
    }
}

type Headers = Vec<(String, String)>;

/// Endpoint, headers and API key for `weave`.
fn resolve_weave(
    weave: &WeaveOptions,
    env: Env<'_>,
) -> Result<(String, Headers, String), ConfigError> {
    let project = weave.project.trim();
    if project.is_empty() {
        return Err(ConfigError::Type(format!(
            "{PREFIX} weave.project must be a non-empty 'entity/project' string."
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
fn base_headers(
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
fn check_header(name: &str, value: &str) -> Result<(), String> {
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

/// telemetry.sdk.* plus service.name, the attributes every Resource carries.
fn sdk_resource(service_name: String) -> Vec<(String, String)> {
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

struct Batch {
    max_queue_size: usize,
    max_export_batch_size: usize,
    scheduled_delay_millis: u64,
    export_timeout_millis: u64,
    warnings: Vec<String>,
}

fn resolve_batch(options: &BatchOptions, env: Env<'_>) -> Result<Batch, ConfigError> {
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
fn resolve_transport(
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

/// Whether bodies are gzipped when the environment does not say: yes,
/// unless the collector is on this machine (`localhost`, 127.0.0.0/8,
/// `::1`). Over loopback gzip saves no bandwidth and only costs CPU, which
/// on a busy machine the application's own threads compete for: in
/// S1-shaped runs on two cores, 4 µs of a 70 µs lifecycle (8 alternating
/// pairs). The OpenTelemetry SDKs never compress unless told.
fn compresses_by_default(endpoint: &str) -> bool {
    let Ok(uri) = endpoint.parse::<ureq::http::Uri>() else {
        return true;
    };
    let Some(host) = uri.host() else {
        return true;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let loopback = name == "localhost"
        || name.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    !loopback
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;

/// The values of a URL's query string (`a=1&b=2` gives `1`, `2`), raw and
/// percent-decoded.
fn query_values(url: &str) -> Vec<String> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or("");
    let mut values = Vec::new();
    for pair in query.split('&') {
        let value = pair.split_once('=').map_or(pair, |(_, v)| v);
        if value.is_empty() {
            continue;
        }
        values.push(value.to_string());
        let decoded = percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned();
        if decoded != value {
            values.push(decoded);
        }
    }
    values
}
