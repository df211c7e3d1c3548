//! gzip (RFC 1952) of request bodies with one deflate state kept for the
//! exporter's lifetime. A new `GzEncoder` per body allocated and zeroed
//! zlib's window and hash tables (about 300 KiB) every time: a quarter of
//! the exporter thread's time went to that alone.

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// Fixed header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

pub struct Gzip {
    deflate: Compress,
}

impl Gzip {
    pub fn new() -> Self {
        Gzip {
            // Raw deflate: the gzip framing is written here.
            deflate: Compress::new(Compression::fast(), false),
        }
    }

    /// `raw` gzipped into `out` (cleared first, its allocation reused);
    /// false if deflate failed (the caller sends `raw` plain).
    pub fn zip(&mut self, raw: &[u8], out: &mut Vec<u8>) -> bool {
        self.deflate.reset();
        out.clear();
        out.reserve(raw.len() / 3 + 64);
        out.extend_from_slice(&HEADER);
        loop {
            let read = self.deflate.total_in() as usize;
            if out.capacity() - out.len() < 1024 {
                out.reserve(out.capacity().max(4096));
            }
            let Ok(status) =
                self.deflate
                    .compress_vec(&raw[read.min(raw.len())..], out, FlushCompress::Finish)
            else {
                return false;
            };
            if status == Status::StreamEnd {
                break;
            }
        }
        let mut crc = Crc::new();
        crc.update(raw);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        // ISIZE: the input length modulo 2^32.
        out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        true
    }
}
