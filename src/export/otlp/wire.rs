//! Protobuf wire primitives for the spans encoded by hand (`prepared`).
//! Field numbers and skipping rules follow prost's proto3 output, so the
//! bytes equal what the generated types would write.

const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn varint_len(v: u64) -> usize {
    // Bits needed, 7 per byte, at least one byte.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

pub fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

/// Bytes of a tag (every field number used here is below 16: one byte).
pub const TAG_LEN: usize = 1;

/// A length-delimited field's header: tag and length.
pub fn len_header(out: &mut Vec<u8>, field: u32, len: usize) {
    tag(out, field, LEN);
    varint(out, len as u64);
}

/// Size of a length-delimited field holding `len` bytes.
pub fn len_field_size(len: usize) -> usize {
    TAG_LEN + varint_len(len as u64) + len
}

pub fn bytes_field(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    len_header(out, field, bytes.len());
    out.extend_from_slice(bytes);
}

/// proto3: an empty string or bytes field is not written.
pub fn bytes_field_if_any(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    if !bytes.is_empty() {
        bytes_field(out, field, bytes);
    }
}

pub fn fixed64_field(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, FIXED64);
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn fixed32_field(out: &mut Vec<u8>, field: u32, v: u32) {
    tag(out, field, FIXED32);
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn varint_field(out: &mut Vec<u8>, field: u32, v: u64) {
    tag(out, field, VARINT);
    varint(out, v);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_lengths_match_the_bytes_written() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            assert_eq!(prost::encoding::encoded_len_varint(v), out.len(), "{v}");
        }
    }
}
