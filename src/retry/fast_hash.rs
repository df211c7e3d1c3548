//! The hasher of the count tables. std's SipHash costs ~20 ns per
//! invocation id (a 38-byte `e-<uuid>`), and every failure and success hashes
//! a scope and a tool name on the JavaScript thread. This is the Fx word
//! hash (rustc's), fed 8 bytes at a time: a few nanoseconds per key.
//!
//! It is not DoS-resistant. The keys are invocation ids (ADK's own) and tool
//! names; a model inventing colliding names only slows lookups in a table
//! bounded by the open invocations and their failed tools.

use std::hash::{BuildHasherDefault, Hasher};

/// `HashMap` state for the count tables.
pub type FastHash = BuildHasherDefault<FxHasher>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // The length first: "ab" and "ab\0" pad to the same last word.
        self.add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(text: &str) -> u64 {
        FastHash::default().hash_one(text)
    }

    #[test]
    fn different_keys_hash_apart() {
        let keys = [
            "",
            "a",
            "ab",
            "ab\0",
            "get_weather",
            "get_time",
            "e-1",
            "e-2",
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(hash(a), hash(b), "{a:?} vs {b:?}");
            }
        }
        assert_eq!(hash("get_weather"), hash("get_weather"));
    }
}
