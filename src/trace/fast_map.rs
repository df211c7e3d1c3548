//! The hash map of the span model's per-callback lookups (invocations by
//! id, agents by name): std's map with foldhash's seeded hasher, several
//! times faster than SipHash on short keys and still randomised per process.
//! A traced model call looks its invocation up five times.

pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
