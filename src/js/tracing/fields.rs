//! Reading a batch of callback records (records.rs) field by field: numbers
//! in order from the batch's numbers, strings by their length from its text,
//! or from its long strings apart.

use crate::trace::inputs::AgentInfo;
use crate::trace::key_text;
use napi::{Error, Result, Status};

pub fn malformed() -> Error {
    Error::new(
        Status::InvalidArg,
        "TracingPlugin: malformed callback records",
    )
}

/// Reads a batch's fields in order.
pub struct Fields<'a> {
    nums: &'a [f64],
    at: usize,
    text: &'a [u16],
    text_at: usize,
    big: &'a [String],
}

enum Field<'a> {
    None,
    Units(&'a [u16]),
    Big(&'a str),
}

impl<'a> Fields<'a> {
    pub fn new(nums: &'a [f64], text: &'a [u16], big: &'a [String]) -> Self {
        Fields {
            nums,
            at: 0,
            text,
            text_at: 0,
            big,
        }
    }

    pub fn done(&self) -> bool {
        self.at >= self.nums.len()
    }

    pub fn num(&mut self) -> Result<f64> {
        let v = *self.nums.get(self.at).ok_or_else(malformed)?;
        self.at += 1;
        Ok(v)
    }

    pub fn flag(&mut self) -> Result<bool> {
        Ok(self.num()? == 1.0)
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
        if v >= 0.0 {
            let end = self.text_at.checked_add(v as usize).ok_or_else(malformed)?;
            let units = self.text.get(self.text_at..end).ok_or_else(malformed)?;
            self.text_at = end;
            return Ok(Field::Units(units));
        }
        if v == -1.0 {
            return Ok(Field::None);
        }
        let i = (-2.0 - v) as usize;
        Ok(Field::Big(self.big.get(i).ok_or_else(malformed)?))
    }

    /// A string's text (lone surrogates become U+FFFD, as in any UTF-8
    /// reading of a JavaScript string).
    pub fn text(&mut self) -> Result<Option<String>> {
        Ok(match self.field()? {
            Field::None => None,
            Field::Units(u) => Some(key_text::lossy_from_utf16(u)),
            Field::Big(s) => Some(s.to_owned()),
        })
    }

    /// A string used as a key (`crate::trace::key_text`).
    pub fn key(&mut self) -> Result<Option<String>> {
        Ok(match self.field()? {
            Field::None => None,
            Field::Units(u) => Some(key_text::from_utf16(u)),
            // Keys are never written as big strings.
            Field::Big(_) => return Err(malformed()),
        })
    }

    pub fn some_key(&mut self) -> Result<String> {
        self.key()?.ok_or_else(malformed)
    }

    pub fn text_or_empty(&mut self) -> Result<String> {
        Ok(self.text()?.unwrap_or_default())
    }

    /// `count` flat 5-tuples (name, parent, description, model,
    /// sequential ? '1' : '') as lib/tracing/agents.js makes them.
    pub fn agents(&mut self) -> Result<Vec<AgentInfo>> {
        let count = self.num()? as usize;
        let mut out = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            out.push(AgentInfo {
                name: self.key()?.unwrap_or_default(),
                parent: self.key()?.filter(|p| !p.is_empty()),
                description: self.text()?.filter(|p| !p.is_empty()),
                model: self.text()?.filter(|p| !p.is_empty()),
                sequential: self.text()?.is_some_and(|s| !s.is_empty()),
            });
        }
        Ok(out)
    }
}
