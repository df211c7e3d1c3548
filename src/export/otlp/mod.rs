//! The `otlp` exporter: spans go through a bounded queue to one exporter
//! thread that batches, encodes (protobuf, gzip) and POSTs them over
//! OTLP/HTTP with retries. The span model's thread encodes each span's own
//! fields (`prepared`) and pushes it onto the queue.
//!
//! Wiring (napi layer): `resolve` gives `ExporterChoice::Otlp(config)` (or
//! `ConsoleAndOtlp`, which a tee also hands the console exporter); set
//! `config.on_warning` to a thread-safe bridge to `process.emitWarning` (it is
//! called on the exporter thread), or leave it `None` and drain
//! `take_warnings()` now and then. Either way the
//! warnings `resolve` put in `config.warnings` come out the same way.
//! `on_end` encodes the span (all but its deferred values) and pushes it;
//! `force_flush`/`shutdown` block the calling thread up to their timeout
//! (call them from a worker thread, or at exit).

mod batch;
pub mod encode;
mod give_back;
mod gzip;
pub mod http;
mod http_date;
pub mod prepared;
pub mod proto;
mod warn;
mod wire;

use super::config::OtlpConfig;
use crate::trace::sink::{SinkWarning, SpanSink};
use crate::trace::span::SpanData;
use batch::{Shared, Worker};
use prepared::PreparedSpan;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct OtlpSink {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl OtlpSink {
    /// Starts the exporter thread. The warnings `config` carries from
    /// resolution go out through the same channel as the exporter's own
    /// (`config.on_warning`, else `take_warnings`).
    pub fn start(config: OtlpConfig) -> Result<OtlpSink, String> {
        let uri: ureq::http::Uri = config.endpoint.parse().map_err(|_| {
            format!(
                "TracingPlugin: '{}' is not a valid OTLP endpoint URL.",
                super::config::display_url(&config.endpoint)
            )
        })?;
        if !matches!(uri.scheme_str(), Some("http") | Some("https")) || uri.host().is_none() {
            return Err(format!(
                "TracingPlugin: '{}' is not an http:// or https:// URL.",
                super::config::display_url(&config.endpoint)
            ));
        }
        let shared = Arc::new(Shared::new(&config));
        for w in &config.warnings {
            shared.warnings.emit_config(w.clone());
        }
        let worker = Worker::new(Arc::clone(&shared), &config);
        let thread = std::thread::Builder::new()
            .name("adk-otlp-export".into())
            .spawn(move || worker.run())
            .map_err(|e| format!("TracingPlugin: could not start the OTLP exporter thread: {e}"))?;
        Ok(OtlpSink {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// How often the exporter thread woke up (an idle one does not).
    #[doc(hidden)]
    pub fn worker_wakeups(&self) -> u64 {
        self.shared.wakeups.load(Ordering::Relaxed)
    }
}

impl SpanSink for OtlpSink {
    fn on_end(&self, span: SpanData) {
        self.shared.push(PreparedSpan::new(span));
    }

    fn force_flush(&self, timeout: Duration) -> bool {
        self.shared.flush(Instant::now() + timeout)
    }

    fn flush_bound(&self) -> Duration {
        self.shared.flush_bound
    }

    fn shutdown(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        if !self.shared.begin_shutdown() {
            return;
        }
        if self.shared.finish_shutdown(deadline) {
            let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(handle) = handle {
                // It has exited: this join returns at once.
                let _ = handle.join();
            }
        }
    }

    fn dropped_count(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Warnings not yet handed out (only when `on_warning` is not set).
    fn take_warnings(&self) -> Vec<SinkWarning> {
        self.shared.warnings.take()
    }

    fn has_pending(&self) -> bool {
        self.shared.has_pending()
    }
}

impl Drop for OtlpSink {
    /// Dropped without shutdown: the thread exports what is queued and exits
    /// on its own; nobody waits for it.
    fn drop(&mut self) {
        self.shared.begin_shutdown();
    }
}

#[cfg(test)]
mod tests;
