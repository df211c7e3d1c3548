//! The exporter's warnings: one per kind of problem, secrets scrubbed, handed
//! to a hook (the napi layer's `process.emitWarning` bridge) or kept for
//! `take_warnings`.

use crate::export::config::{display_url, OtlpConfig, WarningHook};
use crate::trace::sink::SinkWarning;
use std::collections::HashSet;
use std::sync::Mutex;

/// Kept warnings are few (one per kind); the cap only guards against a bug.
const MAX_PENDING: usize = 64;
/// Shorter values are not worth hiding and would garble messages.
const MIN_SECRET_LEN: usize = 4;
/// How much of a collector's answer a warning quotes.
const QUOTE_CHARS: usize = 200;

pub struct Warnings {
    emitted: Mutex<HashSet<String>>,
    pending: Mutex<Vec<SinkWarning>>,
    hook: Option<WarningHook>,
    secrets: Vec<String>,
    /// The collector, as warnings show it: part of each problem's kind.
    endpoint: String,
}

impl Warnings {
    pub fn new(config: &OtlpConfig) -> Self {
        let mut secrets: Vec<String> = config.secrets.clone();
        for (_, v) in &config.headers {
            secrets.push(v.clone());
            // `Basic xyz` / `Bearer xyz`: the token alone may be echoed back.
            if let Some((_, token)) = v.split_once(' ') {
                secrets.push(token.trim().to_string());
            }
        }
        secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Warnings {
            emitted: Mutex::new(HashSet::new()),
            pending: Mutex::new(Vec::new()),
            hook: config.on_warning.clone(),
            secrets,
            endpoint: display_url(&config.endpoint),
        }
    }

    /// Emits `message` unless a warning of `kind` was already emitted. The
    /// kind it carries names the problem for the process-wide once
    /// (lib/tracing/warnings.js) with the collector it is about: the same answer from
    /// one collector is warned about once, whatever its words.
    pub fn once(&self, kind: &str, message: String) {
        let first = match self.emitted.lock() {
            Ok(mut set) => set.insert(kind.to_string()),
            Err(poisoned) => poisoned.into_inner().insert(kind.to_string()),
        };
        if first {
            let text = self.redact(message);
            self.send(format!("otlp {kind} {}", self.endpoint), text);
        }
    }

    /// A problem with the configuration (the environment's), whatever the
    /// collector: once per process for each text, which names the variable
    /// and the value refused.
    pub fn emit_config(&self, text: String) {
        let text = self.redact(text);
        self.send(format!("config {text}"), text);
    }

    /// Hands on `text`, its secrets already scrubbed.
    fn send(&self, kind: String, text: String) {
        let warning = SinkWarning { kind, text };
        if let Some(hook) = &self.hook {
            // A panicking hook must not take the exporter thread down.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(warning)));
            return;
        }
        let mut pending = match self.pending.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        if pending.len() < MAX_PENDING {
            pending.push(warning);
        }
    }

    pub fn take(&self) -> Vec<SinkWarning> {
        match self.pending.lock() {
            Ok(mut p) => std::mem::take(&mut *p),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// `text` (a collector's answer) as a warning quotes it: secrets scrubbed
    /// first, then cut, so no part of a secret survives the cut.
    pub fn quote(&self, text: &str) -> String {
        let clean = self.redact(text.to_string());
        let mut cut: String = clean.chars().take(QUOTE_CHARS).collect();
        if cut.len() < clean.len() {
            cut.push('…');
        }
        cut
    }

    pub fn redact(&self, mut message: String) -> String {
        for secret in &self.secrets {
            if message.contains(secret.as_str()) {
                message = message.replace(secret.as_str(), "[redacted]");
            }
        }
        message
    }
}
