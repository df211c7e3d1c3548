//! The addon's allocator: mimalloc, told to keep freed pages a while.
//!
//! Spans are allocated on one thread and freed on another: mimalloc hands
//! such cross-thread frees back cheaply, where the system allocator
//! measured as a large share of the exporter's CPU.
//!
//! A batch of callback records is copied on the JavaScript thread every few
//! milliseconds and freed on the tracing thread. By default mimalloc gives
//! freed pages back to the system 10 ms later, and the next batches took
//! them back page fault by page fault: 2.5-4.2 faults a hand-over in
//! S1-shaped runs, against 0.5-1.1 with the pages kept `KEEP_FREED_MS`; the
//! hand-over's share of a lifecycle went from 1.7-2.5 µs to 1.0-2.0 (six
//! alternating pairs). A process that stops tracing still gets its memory
//! back soon after.

use libmimalloc_sys::{mi_option_set, mi_option_t, mi_option_use_numa_nodes};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed pages stay with mimalloc before they go back to the system.
pub const KEEP_FREED_MS: i64 = 100;

/// `mi_option_purge_delay`, which libmimalloc-sys does not name: in the
/// mimalloc 2 headers it compiles, the option just before `use_numa_nodes`
/// (a test checks it is the one `MIMALLOC_PURGE_DELAY` sets).
const PURGE_DELAY: mi_option_t = mi_option_use_numa_nodes - 1;

/// Keeps freed pages `KEEP_FREED_MS`, unless `MIMALLOC_PURGE_DELAY` says
/// otherwise (mimalloc reads it itself).
pub fn keep_freed_pages() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: mimalloc's options are plain values it reads when it
        // purges; setting one is safe from any thread at any time.
        unsafe { mi_option_set(PURGE_DELAY, KEEP_FREED_MS as _) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;
    use std::process::Command;

    /// The purge delay mimalloc uses now, in ms.
    fn purge_delay_ms() -> i64 {
        // SAFETY: reads one option's value.
        unsafe { mi_option_get(PURGE_DELAY) as i64 }
    }

    const CHILD: &str = "ADK_ALLOCATOR_TEST_CHILD";
    const NAME: &str = "allocator::tests::the_option_set_is_the_one_mimalloc_purge_delay_sets";

    #[test]
    fn the_option_set_is_the_one_mimalloc_purge_delay_sets() {
        if std::env::var_os(CHILD).is_some() {
            println!("purge-delay={}", purge_delay_ms());
            return;
        }
        // mimalloc reads MIMALLOC_PURGE_DELAY into the purge delay option
        // itself: a child given 37 reads 37 only from the right option.
        let exe = std::env::current_exe().expect("the test binary");
        let out = Command::new(exe)
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("MIMALLOC_PURGE_DELAY", "37")
            .output()
            .expect("the test binary runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("purge-delay=37"), "{text}");
    }

    #[test]
    fn freed_pages_are_kept_longer() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        keep_freed_pages();
        assert_eq!(purge_delay_ms(), KEEP_FREED_MS);
    }
}
