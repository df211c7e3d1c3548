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
    convert(units, |c| match c {
        Ok(ESC) => (ESC, Some(ESC)),
        Ok(c) => (c, None),
        Err(lone) => {
            let mark = char::from_u32(MARK + u32::from(lone) - 0xD800);
            (ESC, Some(mark.unwrap_or(char::REPLACEMENT_CHARACTER)))
        }
    })
}

/// The text of UTF-16 `units` as any UTF-8 reading of a JavaScript string
/// gives it: each lone surrogate becomes U+FFFD (`String::from_utf16_lossy`,
/// with ASCII runs copied in bulk: the callbacks' text is mostly ASCII, and
/// decoding it character by character was a third of the tracing thread's
/// time).
pub fn lossy_from_utf16(units: &[u16]) -> String {
    convert(units, |c| (c.unwrap_or(char::REPLACEMENT_CHARACTER), None))
}

/// UTF-16 to UTF-8: ASCII runs in bulk; every other character, or lone
/// surrogate (as `Err(unit)`), becomes the one or two characters `other`
/// gives for it.
fn convert(
    units: &[u16],
    mut other: impl FnMut(Result<char, u16>) -> (char, Option<char>),
) -> String {
    let mut out = Vec::with_capacity(units.len());
    let mut at = 0;
    while at < units.len() {
        let rest = &units[at..];
        let n = ascii_run(rest);
        out.extend(rest[..n].iter().map(|&u| u as u8));
        at += n;
        let Some(first) = char::decode_utf16(units[at..].iter().copied()).next() else {
            break;
        };
        let (c, then) = match first {
            Ok(c) => {
                at += c.len_utf16();
                other(Ok(c))
            }
            Err(lone) => {
                at += 1;
                other(Err(lone.unpaired_surrogate()))
            }
        };
        push_char(&mut out, c);
        if let Some(c) = then {
            push_char(&mut out, c);
        }
    }
    // SAFETY: `out` holds ASCII bytes (units below 0x80) and whole
    // characters from `char::encode_utf8` only, so it is UTF-8 (checking it
    // again cost a twentieth of the tracing thread's time).
    unsafe { String::from_utf8_unchecked(out) }
}

/// How many leading units are ASCII (checked 16 at a time, which compiles
/// to vector code).
fn ascii_run(units: &[u16]) -> usize {
    let mut n = 0;
    for chunk in units.chunks_exact(16) {
        if chunk.iter().fold(0u16, |a, &u| a | u) >= 0x80 {
            break;
        }
        n += 16;
    }
    n + units[n..]
        .iter()
        .position(|&u| u >= 0x80)
        .unwrap_or(units.len() - n)
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
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
    fn lossy_text_matches_the_standard_conversion() {
        let mut long: Vec<u16> = units(&"abc".repeat(40));
        long.insert(37, 0xD800);
        long.extend(units("é😀"));
        long.push(0xDC00);
        for units in [
            vec![],
            units("plain ascii"),
            units(&"x".repeat(33)),
            units("météo ✓ 😀 and more text after it, past sixteen units"),
            vec![0x61, 0xD800, 0x62],
            vec![0xDBFF, 0xDC00, 0xDFFF],
            vec![0xDC00, 0xD800],
            vec![0x7F, 0x80, 0x7FF, 0x800, 0xFFFF],
            long,
        ] {
            assert_eq!(lossy_from_utf16(&units), String::from_utf16_lossy(&units));
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
