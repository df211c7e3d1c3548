//! Conversation histories captured once: the JSON of each Content item a
//! conversation's model requests carried, kept per slot (lib/tracing/history.js
//! numbers the conversations and decides what is kept). A request sends only
//! the items after the kept prefix; its `gen_ai.input.messages` is rendered
//! from the shared prefix and the new items where the attribute is used (the
//! exporter thread), exactly as the whole request's JSON would render.
//!
//! Items live in chunks (one per request that added some) shared by `Arc`
//! with the spans that show them: a request costs the JavaScript thread only
//! its new items. Memory is bounded by the JavaScript side, which tells this
//! side what to forget; this side never drops a slot on its own.

use super::genai::{truncate, MessageShape};
use super::genai_render::render;
use super::span::DeferredValue;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// What a model request's contents are, relative to its conversation slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryDelta {
    pub slot: u32,
    /// How many leading items of the slot the request starts with.
    pub reuse: u32,
    /// Whether the slot keeps the request's items afterwards.
    pub keep: bool,
}

/// Chunks merged into one when a conversation has more than this many, so a
/// span holds a handful of pieces however long the conversation ran.
const MAX_CHUNKS: usize = 16;

/// The items one request added: their JSON and, once a span needed it,
/// their GenAI rendering (each item renders on its own, so a conversation's
/// items are rendered once, not once per request that repeats them).
#[derive(Debug)]
struct ChunkData {
    /// Items joined by commas, as inside a JSON array.
    bytes: Box<[u8]>,
    /// Byte offset after each item.
    ends: Box<[usize]>,
    rendered: OnceLock<Rendered>,
}

/// Rendered messages joined by commas, and the offset after each.
#[derive(Debug)]
struct Rendered {
    text: String,
    ends: Vec<usize>,
}

impl ChunkData {
    fn new(bytes: Box<[u8]>, ends: Box<[usize]>) -> Arc<Self> {
        Arc::new(ChunkData {
            bytes,
            ends,
            rendered: OnceLock::new(),
        })
    }

    fn item(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] + 1 };
        &self.bytes[start..self.ends[i]]
    }

    /// The first `count` items' messages, rendered (once per chunk).
    fn rendered(&self, count: usize) -> &str {
        let r = self.rendered.get_or_init(|| {
            let mut text = String::new();
            let mut ends = Vec::with_capacity(self.ends.len());
            let mut one = Vec::new();
            for i in 0..self.ends.len() {
                one.clear();
                one.push(b'[');
                one.extend_from_slice(self.item(i));
                one.push(b']');
                let list = render(&one, &MessageShape::InputList);
                if i > 0 {
                    text.push(',');
                }
                // `[message]`: one item renders to one message.
                text.push_str(list.get(1..list.len().saturating_sub(1)).unwrap_or(""));
                ends.push(text.len());
            }
            Rendered { text, ends }
        });
        count
            .checked_sub(1)
            .and_then(|i| r.ends.get(i))
            .map_or("", |&end| &r.text[..end])
    }
}

#[derive(Clone, Debug)]
struct Chunk {
    data: Arc<ChunkData>,
    /// How many of the items belong to the conversation (a prefix).
    count: usize,
}

impl Chunk {
    fn len(&self) -> usize {
        self.data.ends[self.count - 1]
    }
}

#[derive(Default, Debug)]
pub struct Histories {
    slots: HashMap<u32, Vec<Chunk>>,
}

impl Histories {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn forget(&mut self, slot: u32) {
        self.slots.remove(&slot);
    }

    /// Applies a request's delta (`suffix`: the JSON array of its new items)
    /// and returns its whole contents as pieces; `None` when the slot does
    /// not hold `reuse` items or `suffix` is not a JSON array (the slot is
    /// then forgotten: the JavaScript side starts it again in full).
    pub fn apply(&mut self, delta: HistoryDelta, suffix: &[u8]) -> Option<HistoryPieces> {
        let chunks = self.slots.remove(&delta.slot).unwrap_or_default();
        let mut need = delta.reuse as usize;
        let mut kept = Vec::with_capacity(chunks.len() + 1);
        for c in chunks {
            if need == 0 {
                break;
            }
            let take = need.min(c.count);
            need -= take;
            kept.push(Chunk { count: take, ..c });
        }
        if need > 0 {
            return None;
        }
        let inner = suffix.strip_prefix(b"[")?.strip_suffix(b"]")?;
        if !inner.is_empty() {
            let ends = item_ends(inner)?;
            kept.push(Chunk {
                count: ends.len(),
                data: ChunkData::new(inner.into(), ends.into()),
            });
        }
        if kept.len() > MAX_CHUNKS {
            kept = vec![merge(&kept)];
        }
        let pieces = HistoryPieces(kept.iter().map(|c| (c.data.clone(), c.count)).collect());
        if delta.keep {
            self.slots.insert(delta.slot, kept);
        }
        Some(pieces)
    }
}

/// One chunk of all items of `chunks`; their renderings carry over when
/// every chunk has one.
fn merge(chunks: &[Chunk]) -> Chunk {
    let size = chunks.iter().map(|c| c.len() + 1).sum();
    let mut bytes = Vec::with_capacity(size);
    let mut ends = Vec::new();
    let mut text = String::new();
    let mut text_ends = Vec::new();
    let mut all_rendered = true;
    for c in chunks {
        if !bytes.is_empty() {
            bytes.push(b',');
        }
        let base = bytes.len();
        bytes.extend_from_slice(&c.data.bytes[..c.len()]);
        ends.extend(c.data.ends[..c.count].iter().map(|e| base + e));
        match (all_rendered, c.data.rendered.get()) {
            (true, Some(r)) => {
                if !text.is_empty() {
                    text.push(',');
                }
                let base = text.len();
                text.push_str(&r.text[..r.ends[c.count - 1]]);
                text_ends.extend(r.ends[..c.count].iter().map(|e| base + e));
            }
            _ => all_rendered = false,
        }
    }
    let data = ChunkData::new(bytes.into(), ends.into());
    if all_rendered {
        let _ = data.rendered.set(Rendered {
            text,
            ends: text_ends,
        });
    }
    Chunk {
        count: data.ends.len(),
        data,
    }
}

/// The byte offset after each top-level item of a JSON array's inside
/// (as JSON.stringify writes it: no whitespace); `None` if unbalanced.
fn item_ends(inner: &[u8]) -> Option<Vec<usize>> {
    let mut ends = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in inner.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => ends.push(i),
            _ => {}
        }
    }
    if depth != 0 || in_string {
        return None;
    }
    ends.push(inner.len());
    Some(ends)
}

/// A request's contents: the first `count` items of each chunk.
#[derive(Debug, Clone)]
pub struct HistoryPieces(Vec<(Arc<ChunkData>, usize)>);

impl HistoryPieces {
    /// The JSON array these pieces make.
    pub fn to_json(&self) -> Vec<u8> {
        let size: usize = self.0.iter().map(|(d, n)| d.ends[n - 1] + 1).sum();
        let mut raw = Vec::with_capacity(size + 2);
        raw.push(b'[');
        for (i, (d, n)) in self.0.iter().enumerate() {
            if i > 0 {
                raw.push(b',');
            }
            raw.extend_from_slice(&d.bytes[..d.ends[n - 1]]);
        }
        raw.push(b']');
        raw
    }

    /// `gen_ai.input.messages` of these contents: the chunks' renderings
    /// joined, the same text the whole JSON array renders to.
    pub fn render(&self) -> String {
        let parts: Vec<&str> = self.0.iter().map(|(d, n)| d.rendered(*n)).collect();
        let size: usize = parts.iter().map(|p| p.len() + 1).sum();
        let mut out = String::with_capacity(size + 2);
        out.push('[');
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(p);
        }
        out.push(']');
        out
    }
}

/// `gen_ai.input.messages` of a request sent as a delta, rendered on first
/// use like `genai::DeferredMessages` of the whole JSON.
#[derive(Debug)]
pub struct DeferredHistory {
    pub pieces: HistoryPieces,
    pub limit: Option<usize>,
}

impl DeferredValue for DeferredHistory {
    fn render(&self) -> String {
        truncate(self.pieces.render(), self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(slot: u32, reuse: u32) -> HistoryDelta {
        HistoryDelta {
            slot,
            reuse,
            keep: true,
        }
    }

    fn json(p: &HistoryPieces) -> String {
        String::from_utf8(p.to_json()).unwrap()
    }

    #[test]
    fn prefix_and_suffix_make_the_whole_array() {
        let mut h = Histories::default();
        let a = h
            .apply(delta(1, 0), br#"[{"a":"x,]}"},[1,[2]],"q\"],"]"#)
            .unwrap();
        assert_eq!(json(&a), r#"[{"a":"x,]}"},[1,[2]],"q\"],"]"#);
        let b = h.apply(delta(1, 3), br#"[null,{}]"#).unwrap();
        assert_eq!(json(&b), r#"[{"a":"x,]}"},[1,[2]],"q\"],",null,{}]"#);
        // An edit at item 1: items 1.. are replaced.
        let c = h.apply(delta(1, 1), br#"[7]"#).unwrap();
        assert_eq!(json(&c), r#"[{"a":"x,]}"},7]"#);
        // Shorter, nothing new.
        let d = h.apply(delta(1, 1), b"[]").unwrap();
        assert_eq!(json(&d), r#"[{"a":"x,]}"}]"#);
        let e = h.apply(delta(1, 0), b"[]").unwrap();
        assert_eq!(json(&e), "[]");
    }

    #[test]
    fn many_requests_merge_into_few_pieces() {
        let mut h = Histories::default();
        let mut expect = Vec::new();
        for i in 0..100u32 {
            let p = h.apply(delta(3, i), format!("[{i}]").as_bytes()).unwrap();
            expect.push(i.to_string());
            assert_eq!(json(&p), format!("[{}]", expect.join(",")));
            assert!(p.0.len() <= MAX_CHUNKS + 1);
        }
        // Cut inside a merged chunk.
        let p = h.apply(delta(3, 50), b"[\"z\"]").unwrap();
        expect.truncate(50);
        expect.push("\"z\"".into());
        assert_eq!(json(&p), format!("[{}]", expect.join(",")));
    }

    #[test]
    fn an_unknown_prefix_or_bad_suffix_is_refused_and_forgotten() {
        let mut h = Histories::default();
        assert!(h.apply(delta(1, 1), b"[1]").is_none());
        h.apply(delta(1, 0), b"[1,2]").unwrap();
        assert!(h.apply(delta(1, 2), b"[{]").is_none());
        assert!(h.is_empty());
        h.apply(delta(2, 0), b"[1,2]").unwrap();
        h.apply(
            HistoryDelta {
                slot: 2,
                reuse: 2,
                keep: false,
            },
            b"[3]",
        )
        .unwrap();
        assert!(h.is_empty());
        h.apply(delta(4, 0), b"[1]").unwrap();
        h.forget(4);
        assert!(h.apply(delta(4, 1), b"[]").is_none());
    }

    #[test]
    fn renders_like_the_whole_json() {
        let mut h = Histories::default();
        let whole = br#"[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"yo"}]}]"#;
        h.apply(delta(1, 0), whole).unwrap();
        let p = h
            .apply(
                delta(1, 2),
                br#"[{"role":"user","parts":[{"text":"more"}]}]"#,
            )
            .unwrap();
        for limit in [None, Some(40)] {
            let d = DeferredHistory {
                pieces: p.clone(),
                limit,
            };
            let full = p.to_json();
            assert_eq!(
                d.render(),
                truncate(render(&full, &MessageShape::InputList), limit)
            );
        }
    }

    #[test]
    fn chunk_renderings_join_to_the_whole_rendering() {
        // Items of every kind the reference renders, odd ones included.
        let items = [
            r#"{"role":"user","parts":[{"text":"hi \"q\" ✓"},{"inlineData":{"mimeType":"image/png","data":"AA"}}]}"#,
            r#"{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":[1,2.5,null]},"id":"c1"}},{"text":"t","thought":true},{"executableCode":{}}]}"#,
            r#"{"parts":[{"functionResponse":{"name":"f","response":{"x":{"y":"z"}}}}]}"#,
            "null",
            r#"{"role":"user","parts":"not a list"}"#,
            r#"[1,2]"#,
            r#"{"role":"user","parts":[{"text":"\ud83d\ude00 and 1e5 and 1.0"}]}"#,
        ];
        let mut h = Histories::default();
        let mut reuse = 0u32;
        for round in 0..40usize {
            let a = items[round % items.len()];
            let b = items[(round * 3 + 1) % items.len()];
            // Every fifth request cuts the history back before adding.
            if round % 5 == 4 {
                reuse /= 2;
            }
            let p = h
                .apply(delta(9, reuse), format!("[{a},{b}]").as_bytes())
                .unwrap();
            reuse += 2;
            let whole = render(&p.to_json(), &MessageShape::InputList);
            assert_eq!(p.render(), whole, "round {round}");
        }
    }
}
