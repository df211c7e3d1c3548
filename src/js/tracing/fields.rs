//! Reading a batch of callback records (records.rs) field by field: numbers
//! in order from the batch's numbers, strings by their length from its text,
//! or from its long strings apart, or as a repeat of one read before in the
//! same batch (lib/tracing/records.js sends repeats once per batch).

use crate::trace::inputs::AgentInfo;
use crate::trace::key_text;
use napi::{Error, Status};

pub fn malformed() -> Error {
    Error::new(
        Status::InvalidArg,
        "TracingPlugin: malformed callback records",
    )
}

/// A batch that does not read the way lib/tracing/records.js writes them
/// (its own type: this reader is plain Rust, tested without Node).
#[derive(Debug)]
pub struct Malformed;

impl From<Malformed> for Error {
    fn from(_: Malformed) -> Error {
        malformed()
    }
}

type Result<T> = std::result::Result<T, Malformed>;

/// A string field written as `SAME + i` repeats the i-th recent key, or
/// (for `same_text`) its slot's last value; lib/tracing/records.js has the
/// same numbers.
const SAME: f64 = 1_099_511_627_776.0; // 2^40
/// How many recent keys a key field can repeat (written round robin).
const KEYS: usize = 4;
/// beforeModel's fields that mostly repeat, each its own slot.
pub const SAME_MODEL: usize = 0;
pub const SAME_CONFIG: usize = 1;
pub const SAME_TOOLS: usize = 2;
pub const SAME_SYSTEM_JSON: usize = 3;
pub const SAME_SYSTEM_TEXT: usize = 4;
const SLOTS: usize = 5;

/// Reads a batch's fields in order.
pub struct Fields<'a> {
    nums: &'a [f64],
    at: usize,
    text: &'a [u16],
    text_at: usize,
    big: &'a [String],
    /// The batch's last KEYS keys, and each slot's last value.
    keys: [Option<&'a [u16]>; KEYS],
    key_at: usize,
    last: [Option<Field<'a>>; SLOTS],
}

#[derive(Clone, Copy)]
enum Field<'a> {
    None,
    Units(&'a [u16]),
    Big(&'a str),
}

fn text_of(field: Field<'_>) -> Option<String> {
    match field {
        Field::None => None,
        Field::Units(u) => Some(key_text::lossy_from_utf16(u)),
        Field::Big(s) => Some(s.to_owned()),
    }
}

impl<'a> Fields<'a> {
    pub fn new(nums: &'a [f64], text: &'a [u16], big: &'a [String]) -> Self {
        Fields {
            nums,
            at: 0,
            text,
            text_at: 0,
            big,
            keys: [None; KEYS],
            key_at: 0,
            last: [None; SLOTS],
        }
    }

    pub fn done(&self) -> bool {
        self.at >= self.nums.len()
    }

    pub fn num(&mut self) -> Result<f64> {
        let v = *self.nums.get(self.at).ok_or(Malformed)?;
        self.at += 1;
        Ok(v)
    }

    pub fn flag(&mut self) -> Result<bool> {
        Ok(self.num()? == 1.0)
    }

    /// A usageMetadata's counts as records.js `usage()` writes them: a flag
    /// (the object was there), then, when set, prompt, candidates, total,
    /// thoughts and cached-content counts (not finite: none).
    pub fn usage(&mut self) -> Result<(bool, [Option<i64>; 5])> {
        let mut counts = [None; 5];
        let present = self.flag()?;
        if present {
            for count in &mut counts {
                let v = self.num()?;
                *count = v.is_finite().then_some(v as i64);
            }
        }
        Ok((present, counts))
    }

    /// 0 or 1; anything else is none.
    pub fn opt_flag(&mut self) -> Result<Option<bool>> {
        let v = self.num()?;
        Ok(if v == 0.0 {
            Some(false)
        } else if v == 1.0 {
            Some(true)
        } else {
            None
        })
    }

    fn field(&mut self) -> Result<Field<'a>> {
        let v = self.num()?;
        self.field_of(v)
    }

    /// The field written as `v` (not a repeat).
    fn field_of(&mut self, v: f64) -> Result<Field<'a>> {
        if v >= SAME {
            return Err(Malformed);
        }
        if v >= 0.0 {
            let end = self.text_at.checked_add(v as usize).ok_or(Malformed)?;
            let units = self.text.get(self.text_at..end).ok_or(Malformed)?;
            self.text_at = end;
            return Ok(Field::Units(units));
        }
        if v == -1.0 {
            return Ok(Field::None);
        }
        let i = (-2.0 - v) as usize;
        Ok(Field::Big(self.big.get(i).ok_or(Malformed)?))
    }

    /// A string's text (lone surrogates become U+FFFD, as in any UTF-8
    /// reading of a JavaScript string).
    pub fn text(&mut self) -> Result<Option<String>> {
        let field = self.field()?;
        Ok(text_of(field))
    }

    /// A string used as a key (`crate::trace::key_text`).
    pub fn key(&mut self) -> Result<Option<String>> {
        let v = self.num()?;
        let units = if v >= SAME {
            let recent = self.keys.get((v - SAME) as usize).copied().flatten();
            recent.ok_or(Malformed)?
        } else {
            match self.field_of(v)? {
                Field::None => return Ok(None),
                Field::Units(u) => {
                    self.keys[self.key_at] = Some(u);
                    self.key_at = (self.key_at + 1) % KEYS;
                    u
                }
                // Keys are never written as big strings.
                Field::Big(_) => return Err(Malformed),
            }
        };
        Ok(Some(key_text::from_utf16(units)))
    }

    /// A string's text (as `text`) that may repeat slot `slot`'s last value.
    pub fn same_text(&mut self, slot: usize) -> Result<Option<String>> {
        let v = self.num()?;
        let field = if v == SAME {
            let last = self.last.get(slot).copied().flatten();
            match last {
                Some(f @ (Field::Units(_) | Field::Big(_))) => f,
                _ => return Err(Malformed),
            }
        } else {
            let f = self.field_of(v)?;
            *self.last.get_mut(slot).ok_or(Malformed)? = Some(f);
            f
        };
        Ok(text_of(field))
    }

    pub fn some_key(&mut self) -> Result<String> {
        self.key()?.ok_or(Malformed)
    }

    pub fn text_or_empty(&mut self) -> Result<String> {
        Ok(self.text()?.unwrap_or_default())
    }

    /// `count` flat 5-tuples (name, parent, description, model, '' or
    /// '1' for sequential or '2' for a loop) as lib/tracing/agents.js makes them.
    pub fn agents(&mut self) -> Result<Vec<AgentInfo>> {
        let count = self.num()? as usize;
        let mut out = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            let mut info = AgentInfo {
                name: self.key()?.unwrap_or_default(),
                parent: self.key()?.filter(|p| !p.is_empty()),
                description: self.text()?,
                model: self.text()?.filter(|p| !p.is_empty()),
                ..Default::default()
            };
            let kind = self.text()?;
            info.sequential = kind.as_deref().is_some_and(|s| !s.is_empty());
            info.looping = kind.as_deref() == Some("2");
            out.push(info);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn a_key_repeats_one_of_the_last_four_keys_of_the_batch() {
        // "inv", again, "a", "inv" again, then four new keys push "inv" and
        // "a" out of the round robin: slot 0 now holds "k3", slot 1 "k4".
        let text = units("invak1k2k3k4");
        let nums = [
            3.0,
            SAME,
            1.0,
            SAME,
            SAME + 1.0,
            2.0,
            2.0,
            2.0,
            2.0,
            SAME,
            SAME + 1.0,
            SAME + 3.0,
            -1.0,
        ];
        let mut f = Fields::new(&nums, &text, &[]);
        let mut read = Vec::new();
        while !f.done() {
            read.push(f.key().unwrap());
        }
        let want = [
            "inv", "inv", "a", "inv", "a", "k1", "k2", "k3", "k4", "k3", "k4", "k2",
        ];
        let mut want: Vec<Option<String>> = want.iter().map(|s| Some(s.to_string())).collect();
        want.push(None);
        assert_eq!(read, want);
    }

    #[test]
    fn a_key_repeat_of_a_key_not_read_yet_is_malformed() {
        let nums = [SAME + 2.0];
        assert!(Fields::new(&nums, &[], &[]).key().is_err());
        let nums = [SAME + 4.0];
        assert!(Fields::new(&nums, &[], &[]).key().is_err());
    }

    #[test]
    fn a_same_field_repeats_its_own_slots_last_value_inline_or_big() {
        let text = units("gemini{\"t\":1}");
        let big = vec!["x".repeat(2000)];
        let nums = [
            6.0,  // model
            7.0,  // config
            -2.0, // tools: big
            SAME, // model again
            SAME, // config again
            SAME, // tools again
            -1.0, // system: none
        ];
        let mut f = Fields::new(&nums, &text, &big);
        assert_eq!(f.same_text(SAME_MODEL).unwrap().as_deref(), Some("gemini"));
        assert_eq!(
            f.same_text(SAME_CONFIG).unwrap().as_deref(),
            Some("{\"t\":1}")
        );
        assert_eq!(f.same_text(SAME_TOOLS).unwrap(), Some(big[0].clone()));
        assert_eq!(f.same_text(SAME_MODEL).unwrap().as_deref(), Some("gemini"));
        assert_eq!(
            f.same_text(SAME_CONFIG).unwrap().as_deref(),
            Some("{\"t\":1}")
        );
        assert_eq!(f.same_text(SAME_TOOLS).unwrap(), Some(big[0].clone()));
        assert_eq!(f.same_text(SAME_SYSTEM_JSON).unwrap(), None);
        assert!(f.done());
    }

    #[test]
    fn a_repeat_where_none_can_be_is_malformed() {
        // Nothing in the slot yet; the slot's last value was none; a repeat
        // in a field that never repeats.
        assert!(Fields::new(&[SAME], &[], &[])
            .same_text(SAME_TOOLS)
            .is_err());
        let mut f = Fields::new(&[-1.0, SAME], &[], &[]);
        assert_eq!(f.same_text(SAME_TOOLS).unwrap(), None);
        assert!(f.same_text(SAME_TOOLS).is_err());
        assert!(Fields::new(&[SAME], &[], &[]).text().is_err());
        assert!(Fields::new(&[1.0, SAME], &units("a"), &[])
            .same_text(SLOTS)
            .is_err());
    }
}
