//! Trace and span ids: a SplitMix64 generator seeded from the OS randomness
//! std already uses for `HashMap` keys, so ids are unpredictable across
//! processes without a crypto dependency on the hot path.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

pub struct IdGen {
    state: u64,
}

impl Default for IdGen {
    fn default() -> Self {
        Self::new()
    }
}

impl IdGen {
    pub fn new() -> Self {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(std::process::id() as u64);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        h.write_u64(nanos);
        IdGen { state: h.finish() }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 16 random bytes, never all zero (an invalid OTel id).
    pub fn trace_id(&mut self) -> [u8; 16] {
        loop {
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&self.next_u64().to_be_bytes());
            id[8..].copy_from_slice(&self.next_u64().to_be_bytes());
            if id != [0; 16] {
                return id;
            }
        }
    }

    /// 8 random bytes, never all zero.
    pub fn span_id(&mut self) -> [u8; 8] {
        loop {
            let id = self.next_u64().to_be_bytes();
            if id != [0; 8] {
                return id;
            }
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The bytes of a hex id (either case), `None` unless it is exactly `N`
/// bytes and not all zero (an invalid OpenTelemetry id).
pub fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != N * 2 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    (out != [0; N]).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_hex_is_lowercase() {
        let mut g = IdGen::new();
        let a = g.trace_id();
        let b = g.trace_id();
        assert_ne!(a, b);
        assert_eq!(hex(&[0xAB, 0x01]), "ab01");
        assert_eq!(hex(&g.span_id()).len(), 16);
    }

    #[test]
    fn hex_ids_parse_back() {
        let id = IdGen::new().trace_id();
        assert_eq!(from_hex::<16>(&hex(&id)), Some(id));
        assert_eq!(from_hex::<2>("AB01"), Some([0xAB, 0x01]));
        assert_eq!(from_hex::<2>("0000"), None);
        assert_eq!(from_hex::<2>("ab0"), None);
        assert_eq!(from_hex::<2>("ab0g"), None);
        assert_eq!(from_hex::<2>("+b01"), None);
    }
}
