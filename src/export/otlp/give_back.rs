//! Exported spans go back to the thread that made them, to be freed there.
//!
//! A span's encoded fields and captured JSON are allocated on the span
//! model's thread. Freed on the exporter thread, each block went onto a list
//! mimalloc makes its owner walk later, a cold pointer chase: about a
//! seventh of the span model's thread in `perf`, and a tenth of the
//! exporter's in the frees themselves. So the exporter hands each batch back
//! once it is encoded, and the span model's thread frees it when it next
//! ends a span. At most one batch is held: one not taken by the time the
//! next is handed back is freed by the exporter as before, and so is one
//! still held when the exporter goes idle or exits.

use super::prepared::PreparedSpan;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Default)]
pub struct GiveBack {
    held: Mutex<Option<Vec<PreparedSpan>>>,
    /// Whether `held` has a batch; read without the lock (a stale answer
    /// only delays the freeing), written with it.
    full: AtomicBool,
}

impl GiveBack {
    /// The exporter's part: keeps `batch`; returns the one it replaces (for
    /// the caller to free, outside the lock).
    pub fn put(&self, batch: Vec<PreparedSpan>) -> Option<Vec<PreparedSpan>> {
        let mut held = self.lock();
        let old = held.replace(batch);
        self.full.store(true, Ordering::Relaxed);
        old
    }

    /// The batch held, if any (one relaxed load when there is none).
    pub fn take(&self) -> Option<Vec<PreparedSpan>> {
        if !self.full.load(Ordering::Relaxed) {
            return None;
        }
        let mut held = self.lock();
        self.full.store(false, Ordering::Relaxed);
        held.take()
    }

    /// Whether a batch is held (for the tests).
    #[cfg(test)]
    pub fn holds(&self) -> bool {
        self.lock().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<PreparedSpan>>> {
        // Nothing here panics while holding the lock; survive it anyway.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::span::SpanData;

    fn batch(names: &[&str]) -> Vec<PreparedSpan> {
        names
            .iter()
            .map(|n| PreparedSpan::new(SpanData::bare(n, 1, 2)))
            .collect()
    }

    #[test]
    fn one_batch_is_held_and_taken_once() {
        let g = GiveBack::default();
        assert!(g.take().is_none());
        assert!(g.put(batch(&["a"])).is_none());
        // Not taken in time: the first comes back to the exporter to free.
        let replaced = g.put(batch(&["b", "c"])).expect("the first batch");
        assert_eq!(replaced.len(), 1);
        assert_eq!(g.take().map(|b| b.len()), Some(2));
        assert!(g.take().is_none());
    }
}
