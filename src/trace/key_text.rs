//! The text of a JavaScript string used as a key (invocation ids, agent and
//! tool names, call ids), without losing what tells two strings apart.
//!
//! A JavaScript string is UTF-16 and may hold lone surrogates, which UTF-8
//! cannot: the usual conversion turns each into U+FFFD, so `'\uD800'` and
//! `'\uDBFF'` would become one key. Here a lone surrogate becomes `ESC`
//! followed by a private-use character that names it, and `ESC` itself is
//! doubled. A well-formed string without `ESC` (a noncharacter, reserved
//! for such internal use; in practice every key) is its own key, so only
//! the strings that need it pay. `display` gives the usual lossy text back
//! for span names and attributes.

use std::borrow::Cow;

/// U+FDD0, the first noncharacter.
pub const ESC: char = '\u{FDD0}';
/// Lone surrogate `u` is written as `ESC`, then `char(MARK + u - 0xD800)`.
const MARK: u32 = 0xE000;

/// The key text of UTF-16 `units`: the plain text when they are
/// well-formed and hold no `ESC`, else the escaped form described above.
pub fn from_utf16(units: &[u16]) -> String {
    let mut out = String::with_capacity(units.len());
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok(ESC) => {
                out.push(ESC);
                out.push(ESC);
            }
            Ok(c) => out.push(c),
            Err(lone) => {
                out.push(ESC);
                let u = u32::from(lone.unpaired_surrogate());
                out.push(char::from_u32(MARK + u - 0xD800).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
    }
    out
}

/// The UTF-16 units a key was made from (`from_utf16` undone), to hand a
/// key back to JavaScript as the string it was.
pub fn to_utf16(key: &str) -> Vec<u16> {
    let mut out = Vec::with_capacity(key.len());
    let mut chars = key.chars();
    while let Some(c) = chars.next() {
        if c != ESC {
            let mut buf = [0u16; 2];
            out.extend_from_slice(c.encode_utf16(&mut buf));
            continue;
        }
        match chars.next() {
            Some(ESC) => out.push(ESC as u16),
            // MARK + u - 0xD800 is below 0xE800: the unit fits.
            Some(mark) => out.push((u32::from(mark) - MARK + 0xD800) as u16),
            None => out.push(char::REPLACEMENT_CHARACTER as u16),
        }
    }
    out
}

/// Whether UTF-8 `text` converted from a JavaScript string may have lost a
/// lone surrogate (it holds U+FFFD) or holds `ESC`: then its key must be
/// made from the UTF-16 units with `from_utf16`.
pub fn needs_utf16(text: &str) -> bool {
    // Both are three bytes starting 0xEF; most keys are ASCII.
    text.as_bytes().contains(&0xEF)
        && text
            .chars()
            .any(|c| c == ESC || c == char::REPLACEMENT_CHARACTER)
}

/// The text a key shows in spans: each lone surrogate as U+FFFD, as any
/// UTF-8 conversion of the original string shows it.
pub fn display(key: &str) -> Cow<'_, str> {
    if !key.contains(ESC) {
        return Cow::Borrowed(key);
    }
    let mut out = String::with_capacity(key.len());
    let mut chars = key.chars();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(ESC) => out.push(ESC),
            _ => out.push(char::REPLACEMENT_CHARACTER),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(units: &[u16]) -> String {
        from_utf16(units)
    }

    fn units(text: &str) -> Vec<u16> {
        text.encode_utf16().collect()
    }

    #[test]
    fn well_formed_text_is_its_own_key() {
        for text in [
            "",
            "e-1234",
            "get_weather",
            "a\0b",
            "météo ✓ 😀",
            "\u{FFFD}",
        ] {
            assert_eq!(key(&units(text)), text);
            assert!(!needs_utf16(text) || text.contains('\u{FFFD}'));
            assert_eq!(display(text), text);
        }
    }

    #[test]
    fn lone_surrogates_are_distinct_keys() {
        let all = [
            key(&[0xD800]),
            key(&[0xDBFF]),
            key(&[0xDC00]),
            key(&[0xDFFF]),
            key(&units("\u{FFFD}")),
            key(&units("\u{FDD0}")),
            key(&units("\u{FDD0}\u{E000}")),
            key(&[0xFDD0, 0xD800]),
            key(&[0xD800, 0xDC00]), // a pair: one character
            key(&[0xDC00, 0xD800]), // two lone ones
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(key(&[0xD800, 0xDC00]), "\u{10000}");
    }

    #[test]
    fn keys_give_back_their_units() {
        for units in [
            vec![],
            vec![0x61, 0xD800, 0x62],
            vec![0xDBFF, 0xDC00, 0xDFFF],
            units("x\u{FDD0}y\u{FFFD}😀"),
            vec![0xFDD0, 0xD800],
        ] {
            assert_eq!(to_utf16(&key(&units)), units);
        }
    }

    #[test]
    fn keys_display_as_the_lossy_text() {
        assert_eq!(display(&key(&[0x61, 0xD800, 0x62])), "a\u{FFFD}b");
        assert_eq!(display(&key(&units("x\u{FDD0}y"))), "x\u{FDD0}y");
        assert_eq!(display(&key(&[0xDFFF])), "\u{FFFD}");
        assert!(needs_utf16("a\u{FFFD}"));
        assert!(needs_utf16("\u{FDD0}"));
        assert!(!needs_utf16("e-1\u{FFFE}"));
    }
}
