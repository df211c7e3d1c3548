//! Which exporter a TracingPlugin uses and where it sends spans, from the
//! user's options and the standard OpenTelemetry environment (api.md).

/// The exporter-related options of `new TracingPlugin(options)`, as read from
/// JavaScript by the napi layer (`None` = option not given).
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    pub exporter: Option<String>,
    pub endpoint: Option<String>,
    pub headers: Option<Vec<(String, String)>>,
    pub weave: Option<WeaveOptions>,
    pub service_name: Option<String>,
    pub resource_attributes: Option<Vec<(String, String)>>,
    pub batch: BatchOptions,
}

#[derive(Clone, Debug, Default)]
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

/// Everything the OTLP exporter needs, fully resolved.
#[derive(Clone, Debug, Default)]
pub struct OtlpConfig {
    pub endpoint: String,
    pub headers: Vec<(String, String)>,
    pub resource_attributes: Vec<(String, String)>,
    pub max_queue_size: usize,
    pub max_export_batch_size: usize,
    pub scheduled_delay_millis: u64,
    pub export_timeout_millis: u64,
}

#[derive(Clone, Debug)]
pub enum ExporterChoice {
    /// Nothing is exported; `warning` says why when the user should know.
    None {
        warning: Option<String>,
    },
    Console,
    Memory,
    Otlp(Box<OtlpConfig>),
}

/// A bad option: `Type` becomes a JavaScript `TypeError`, `Plain` an `Error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    Type(String),
    Plain(String),
}

/// Resolves the options against the environment (`env` looks a variable up).
/// Placeholder: the full rules of api.md land with the OTLP exporter.
pub fn resolve(
    options: &ExportOptions,
    _env: &dyn Fn(&str) -> Option<String>,
) -> Result<ExporterChoice, ConfigError> {
    match options.exporter.as_deref() {
        Some("memory") => Ok(ExporterChoice::Memory),
        Some("console") => Ok(ExporterChoice::Console),
        Some("none") => Ok(ExporterChoice::None { warning: None }),
        Some("otlp") | None => Ok(ExporterChoice::None {
            warning: Some("OTLP export is not built yet".into()),
        }),
        Some(other) => Err(ConfigError::Type(format!(
            "Unknown exporter '{other}': use 'otlp', 'console', 'memory' or 'none'."
        ))),
    }
}
