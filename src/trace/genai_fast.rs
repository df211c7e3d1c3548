//! The fast path of `genai::render_messages`: reads the captured JSON once
//! with borrowed fields (no `serde_json::Value` tree, no maps built and
//! hashed) and writes the GenAI JSON straight into one buffer; tool
//! arguments, tool results and parameter schemas are copied as they are.
//!
//! It gives up (`None`) on anything where that copy or its own reading
//! could differ from the reference (`render_messages` through `Value`):
//! whitespace or non-canonical numbers or escapes inside a copied value,
//! `\uD8xx` surrogate escapes anywhere, duplicate keys, invalid JSON. The
//! caller then renders through the reference, so the output is the same
//! byte for byte either way (tests compare them).

use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::marker::PhantomData;

/// Which shape a captured JSON string is turned into.
#[derive(Clone, Debug)]
pub enum MessageShape {
    /// `[{role, parts}]` from a JSON array of Contents.
    InputList,
    /// `[{role, parts}]` from one Content.
    InputOne,
    /// `[{role, parts, finish_reason}]` from one Content.
    OutputOne { finish_reason: String },
    /// `[{type:'text', content}, ...]` from a system instruction (a string,
    /// a Content, a Part or a list of those).
    SystemInstructions,
    /// `gen_ai.tool.definitions` from the JSON of `config.tools`.
    ToolDefinitions,
}

/// A field that is absent (`None`) or present, `null` included.
#[derive(Default, Clone, Copy)]
struct Field<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Field<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|r| Field(Some(r)))
    }
}

/// What a lenient field holds: `Some` for the kind wanted, `None` for any
/// other JSON value (`null` included) or when absent. Reads the value once.
macro_rules! lenient_visitor {
    ($visitor:ident, $out:ty) => {
        impl<T> $visitor<T> {
            fn other<E>(self) -> Result<$out, E> {
                Ok(Default::default())
            }
        }
    };
}

/// `Some(T)` for a JSON object (read as `T`), `None` for anything else.
struct ObjectOr<T>(Option<T>);

impl<T> Default for ObjectOr<T> {
    fn default() -> Self {
        ObjectOr(None)
    }
}

struct ObjectVisitor<T>(PhantomData<fn() -> T>);
lenient_visitor!(ObjectVisitor, ObjectOr<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor::<T>(PhantomData))
    }
}

/// `Some(items)` for a JSON array, `None` for anything else.
struct ListOf<T>(Option<Vec<T>>);

impl<T> Default for ListOf<T> {
    fn default() -> Self {
        ListOf(None)
    }
}

struct ListVisitor<T>(PhantomData<fn() -> T>);
lenient_visitor!(ListVisitor, ListOf<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ListOf<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListVisitor::<T>(PhantomData))
    }
}

/// `Some(text)` for a JSON string, `None` for anything else.
#[derive(Default)]
struct StrOr<'a>(Option<Cow<'a, str>>);

struct StrVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Deserialize<'de> for StrOr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor(PhantomData))
    }
}

/// The scalar and container cases every lenient visitor shares: anything
/// not handled by the visitor itself is read through and yields `other()`.
macro_rules! skip_the_rest {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            self.other()
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            self.other()
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            self.other()
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            self.other()
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            self.other()
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            self.other()
        }
    };
}

macro_rules! skip_str {
    () => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            self.other()
        }
    };
}

macro_rules! skip_seq {
    () => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            self.other()
        }
    };
}

macro_rules! skip_map {
    () => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            self.other()
        }
    };
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = ObjectOr<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(|t| ObjectOr(Some(t)))
    }
    skip_the_rest!();
    skip_str!();
    skip_seq!();
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
    type Value = ListOf<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<T>()? {
            items.push(item);
        }
        Ok(ListOf(Some(items)))
    }
    skip_the_rest!();
    skip_str!();
    skip_map!();
}

impl<'a> StrVisitor<'a> {
    fn other<E>(self) -> Result<StrOr<'a>, E> {
        Ok(StrOr(None))
    }
}

impl<'de: 'a, 'a> Visitor<'de> for StrVisitor<'a> {
    type Value = StrOr<'a>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(StrOr(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(StrOr(Some(Cow::Owned(v.to_string()))))
    }
    skip_the_rest!();
    skip_seq!();
    skip_map!();
}

/// A Content, read in one pass.
#[derive(Deserialize)]
struct Content<'a> {
    #[serde(default, borrow)]
    role: StrOr<'a>,
    #[serde(default, borrow)]
    parts: ListOf<ObjectOr<Part<'a>>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(default, borrow, rename = "inlineData")]
    inline_data: ObjectOr<Blob<'a>>,
    #[serde(default, borrow, rename = "functionCall")]
    function_call: ObjectOr<Call<'a>>,
    #[serde(default, borrow, rename = "functionResponse")]
    function_response: ObjectOr<Response<'a>>,
    #[serde(default, borrow)]
    text: StrOr<'a>,
}

#[derive(Deserialize)]
struct Blob<'a> {
    #[serde(default, borrow, rename = "mimeType")]
    mime_type: StrOr<'a>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(default, borrow)]
    id: StrOr<'a>,
    #[serde(default, borrow)]
    name: StrOr<'a>,
    #[serde(default, borrow)]
    args: Field<'a>,
}

#[derive(Deserialize)]
struct Response<'a> {
    #[serde(default, borrow)]
    id: StrOr<'a>,
    #[serde(default, borrow)]
    response: Field<'a>,
}

#[derive(Deserialize)]
struct PartIn<'a> {
    #[serde(default, borrow, rename = "inlineData")]
    inline_data: Field<'a>,
    #[serde(default, borrow, rename = "functionCall")]
    function_call: Field<'a>,
    #[serde(default, borrow, rename = "functionResponse")]
    function_response: Field<'a>,
    #[serde(default, borrow)]
    text: Field<'a>,
}

/// A system instruction object: a Content (has `parts`) or a Part.
#[derive(Deserialize)]
struct SystemIn<'a> {
    #[serde(default, borrow)]
    parts: Field<'a>,
    #[serde(default, borrow, rename = "inlineData")]
    inline_data: Field<'a>,
    #[serde(default, borrow, rename = "functionCall")]
    function_call: Field<'a>,
    #[serde(default, borrow, rename = "functionResponse")]
    function_response: Field<'a>,
    #[serde(default, borrow)]
    text: Field<'a>,
}

#[derive(Deserialize)]
struct BlobIn<'a> {
    #[serde(default, borrow, rename = "mimeType")]
    mime_type: Field<'a>,
}

#[derive(Deserialize)]
struct CallIn<'a> {
    #[serde(default, borrow)]
    id: Field<'a>,
    #[serde(default, borrow)]
    name: Field<'a>,
    #[serde(default, borrow)]
    args: Field<'a>,
}

#[derive(Deserialize)]
struct ResponseIn<'a> {
    #[serde(default, borrow)]
    id: Field<'a>,
    #[serde(default, borrow)]
    response: Field<'a>,
}

#[derive(Deserialize)]
struct ToolIn<'a> {
    #[serde(default, borrow, rename = "functionDeclarations")]
    function_declarations: Field<'a>,
}

#[derive(Deserialize)]
struct DeclarationIn<'a> {
    #[serde(default, borrow)]
    name: Field<'a>,
    #[serde(default, borrow)]
    description: Field<'a>,
    #[serde(default, borrow)]
    parameters: Field<'a>,
    #[serde(default, borrow, rename = "parametersJsonSchema")]
    parameters_json_schema: Field<'a>,
}

/// The shape's JSON, or `None` when the reference must render it.
pub fn render(raw: &[u8], shape: &MessageShape) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?;
    // Lone surrogate escapes make the reference give up on the whole value.
    if text.contains("\\ud") || text.contains("\\uD") {
        return None;
    }
    let mut out = Vec::with_capacity(raw.len() + 64);
    let first = text
        .trim_start()
        .as_bytes()
        .first()
        .copied()
        .unwrap_or(b' ');
    match shape {
        MessageShape::InputList => {
            out.push(b'[');
            match first {
                b'[' => {
                    let items: Vec<ObjectOr<Content>> = serde_json::from_str(text).ok()?;
                    for (i, item) in items.into_iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        message(&mut out, item.0, None)?;
                    }
                }
                b'n' => serde_json::from_str::<()>(text).ok()?,
                _ => message(
                    &mut out,
                    serde_json::from_str::<ObjectOr<Content>>(text).ok()?.0,
                    None,
                )?,
            }
            out.push(b']');
        }
        MessageShape::InputOne => {
            out.push(b'[');
            message(
                &mut out,
                serde_json::from_str::<ObjectOr<Content>>(text).ok()?.0,
                None,
            )?;
            out.push(b']');
        }
        MessageShape::OutputOne { finish_reason } => {
            out.push(b'[');
            let content = serde_json::from_str::<ObjectOr<Content>>(text).ok()?.0;
            message(&mut out, content, Some(finish_reason))?;
            out.push(b']');
        }
        MessageShape::SystemInstructions => {
            let top: &RawValue = serde_json::from_str(text).ok()?;
            out.push(b'[');
            system_parts(&mut out, top, &mut true)?;
            out.push(b']');
        }
        MessageShape::ToolDefinitions => {
            let top: &RawValue = serde_json::from_str(text).ok()?;
            tool_definitions(&mut out, top)?
        }
    }
    String::from_utf8(out).ok()
}

/// The first byte of a value: `{`, `[`, `"`, `n` (null), or another.
fn kind(v: &RawValue) -> u8 {
    v.get()
        .trim_start()
        .as_bytes()
        .first()
        .copied()
        .unwrap_or(b' ')
}

fn field_kind(f: Field<'_>) -> u8 {
    f.0.map_or(0, kind)
}

/// The string a field holds, if it holds one.
fn string_of<'a>(f: Field<'a>) -> Option<Option<Cow<'a, str>>> {
    match f.0 {
        Some(v) if kind(v) == b'"' => Some(Some(serde_json::from_str(v.get()).ok()?)),
        _ => Some(None),
    }
}

fn write_str(out: &mut Vec<u8>, s: &str) -> Option<()> {
    serde_json::to_writer(&mut *out, s).ok()
}

fn write_str_or_empty(out: &mut Vec<u8>, f: Field<'_>) -> Option<()> {
    match string_of(f)? {
        Some(s) => write_str(out, &s),
        None => write_str(out, ""),
    }
}

/// A copied value as the reference writes it: `{}` for null or absent.
fn write_object_or_empty(out: &mut Vec<u8>, f: Field<'_>) -> Option<()> {
    match f.0 {
        Some(v) if kind(v) != b'n' => write_copy(out, v),
        _ => {
            out.extend_from_slice(b"{}");
            Some(())
        }
    }
}

fn write_copy(out: &mut Vec<u8>, v: &RawValue) -> Option<()> {
    let s = v.get();
    if !canonical(s) {
        return None;
    }
    out.extend_from_slice(s.as_bytes());
    Some(())
}

fn parse<'a, T: Deserialize<'a>>(v: &'a RawValue) -> Option<T> {
    serde_json::from_str(v.get()).ok()
}

fn message(out: &mut Vec<u8>, content: Option<Content>, finish_reason: Option<&str>) -> Option<()> {
    let (role, parts) = match content {
        Some(c) => (c.role.0, c.parts.0),
        None => (None, None),
    };
    let role: Cow<str> = match role {
        Some(r) if r == "model" => Cow::Borrowed("assistant"),
        Some(r) => r,
        None if finish_reason.is_some() => Cow::Borrowed("assistant"),
        None => Cow::Borrowed(""),
    };
    out.extend_from_slice(b"{\"role\":");
    write_str(out, &role)?;
    out.extend_from_slice(b",\"parts\":[");
    let mut first = true;
    for p in parts.into_iter().flatten().filter_map(|p| p.0) {
        one_part(out, p, &mut first)?;
    }
    out.push(b']');
    if let Some(fr) = finish_reason {
        out.extend_from_slice(b",\"finish_reason\":");
        write_str(out, fr)?;
    }
    out.push(b'}');
    Some(())
}

/// One GenAI part of a message (the reference's `genai::part`).
fn one_part(out: &mut Vec<u8>, p: Part, first: &mut bool) -> Option<()> {
    if let Some(d) = p.inline_data.0 {
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"blob\",\"mime_type\":");
        write_str(out, d.mime_type.0.as_deref().unwrap_or(""))?;
        out.push(b'}');
    } else if let Some(c) = p.function_call.0 {
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"tool_call\",\"id\":");
        write_str(out, c.id.0.as_deref().unwrap_or(""))?;
        out.extend_from_slice(b",\"name\":");
        write_str(out, c.name.0.as_deref().unwrap_or(""))?;
        out.extend_from_slice(b",\"arguments\":");
        write_object_or_empty(out, c.args)?;
        out.push(b'}');
    } else if let Some(r) = p.function_response.0 {
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"tool_call_response\",\"id\":");
        write_str(out, r.id.0.as_deref().unwrap_or(""))?;
        out.extend_from_slice(b",\"response\":");
        write_object_or_empty(out, r.response)?;
        out.push(b'}');
    } else if let Some(t) = p.text.0 {
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"text\",\"content\":");
        write_str(out, &t)?;
        out.push(b'}');
    }
    Some(())
}

fn part(out: &mut Vec<u8>, p: &RawValue, first: &mut bool) -> Option<()> {
    if kind(p) != b'{' {
        return Some(());
    }
    let p: PartIn = parse(p)?;
    part_fields(
        out,
        first,
        p.inline_data,
        p.function_call,
        p.function_response,
        p.text,
    )
}

fn comma(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
}

/// One GenAI part from a Part's fields (the reference's `genai::part`).
fn part_fields(
    out: &mut Vec<u8>,
    first: &mut bool,
    inline_data: Field<'_>,
    function_call: Field<'_>,
    function_response: Field<'_>,
    text: Field<'_>,
) -> Option<()> {
    if field_kind(inline_data) == b'{' {
        let d: BlobIn = parse(inline_data.0?)?;
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"blob\",\"mime_type\":");
        write_str_or_empty(out, d.mime_type)?;
        out.push(b'}');
        return Some(());
    }
    if field_kind(function_call) == b'{' {
        let c: CallIn = parse(function_call.0?)?;
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"tool_call\",\"id\":");
        write_str_or_empty(out, c.id)?;
        out.extend_from_slice(b",\"name\":");
        write_str_or_empty(out, c.name)?;
        out.extend_from_slice(b",\"arguments\":");
        write_object_or_empty(out, c.args)?;
        out.push(b'}');
        return Some(());
    }
    if field_kind(function_response) == b'{' {
        let r: ResponseIn = parse(function_response.0?)?;
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"tool_call_response\",\"id\":");
        write_str_or_empty(out, r.id)?;
        out.extend_from_slice(b",\"response\":");
        write_object_or_empty(out, r.response)?;
        out.push(b'}');
        return Some(());
    }
    if let Some(t) = string_of(text)? {
        comma(out, first);
        out.extend_from_slice(b"{\"type\":\"text\",\"content\":");
        write_str(out, &t)?;
        out.push(b'}');
    }
    Some(())
}

fn system_parts(out: &mut Vec<u8>, v: &RawValue, first: &mut bool) -> Option<()> {
    match kind(v) {
        b'"' => {
            let s: Cow<str> = parse(v)?;
            comma(out, first);
            out.extend_from_slice(b"{\"type\":\"text\",\"content\":");
            write_str(out, &s)?;
            out.push(b'}');
        }
        b'[' => {
            let items: Vec<&RawValue> = parse(v)?;
            for item in items {
                system_parts(out, item, first)?;
            }
        }
        b'{' => {
            let o: SystemIn = parse(v)?;
            if let Some(parts) = o.parts.0 {
                if kind(parts) == b'[' {
                    let items: Vec<&RawValue> = parse(parts)?;
                    for p in items {
                        part(out, p, first)?;
                    }
                }
            } else {
                part_fields(
                    out,
                    first,
                    o.inline_data,
                    o.function_call,
                    o.function_response,
                    o.text,
                )?;
            }
        }
        _ => {}
    }
    Some(())
}

fn tool_definitions(out: &mut Vec<u8>, tools: &RawValue) -> Option<()> {
    out.push(b'[');
    if kind(tools) == b'[' {
        let tools: Vec<&RawValue> = parse(tools)?;
        let mut first = true;
        for tool in tools {
            if kind(tool) != b'{' {
                continue;
            }
            let t: ToolIn = parse(tool)?;
            if field_kind(t.function_declarations) != b'[' {
                continue;
            }
            let decls: Vec<&RawValue> = parse(t.function_declarations.0?)?;
            for d in decls {
                let d: DeclarationIn = if kind(d) == b'{' {
                    parse(d)?
                } else {
                    DeclarationIn {
                        name: Field(None),
                        description: Field(None),
                        parameters: Field(None),
                        parameters_json_schema: Field(None),
                    }
                };
                comma(out, &mut first);
                out.extend_from_slice(b"{\"name\":");
                write_str_or_empty(out, d.name)?;
                out.extend_from_slice(b",\"description\":");
                write_str_or_empty(out, d.description)?;
                out.extend_from_slice(b",\"parameters\":");
                // Present (even null) wins; then the JSON Schema form; else {}.
                match d.parameters.0.or(d.parameters_json_schema.0) {
                    Some(p) => write_copy(out, p)?,
                    None => out.extend_from_slice(b"{}"),
                }
                out.extend_from_slice(b",\"type\":\"function\"}");
            }
        }
    }
    out.push(b']');
    Some(())
}

/// True when `serde_json` would write this (valid) JSON text back unchanged
/// after reading it into a `Value`: no whitespace outside strings, only the
/// escapes it writes itself, numbers it prints the same way.
pub fn canonical(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return false,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => match b.get(i + 1) {
                            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                            Some(b'u') if control_escape(b.get(i + 2..i + 6)) => i += 6,
                            _ => return false,
                        },
                        Some(_) => i += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    i += 1;
                }
                if !canonical_number(&s[start..i]) {
                    return false;
                }
            }
            b' ' | b'\n' | b'\r' | b'\t' => return false,
            _ => i += 1,
        }
    }
    true
}

/// `\u00XX` for a control character serde_json writes that way (lower-case
/// hex; not one of \b \t \n \f \r, which it writes short).
fn control_escape(hex: Option<&[u8]>) -> bool {
    let Some([b'0', b'0', hi @ (b'0' | b'1'), lo]) = hex else {
        return false;
    };
    let lo_ok = lo.is_ascii_digit() || (b'a'..=b'f').contains(lo);
    lo_ok && !(*hi == b'0' && matches!(lo, b'8' | b'9' | b'a' | b'c' | b'd'))
}

fn canonical_number(tok: &str) -> bool {
    let is_int = !tok.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'));
    if is_int {
        let digits = tok.trim_start_matches('-');
        return digits.len() <= 18 && tok != "-0";
    }
    // Floats: only when serde_json prints back exactly this text.
    serde_json::from_str::<serde_json::Value>(tok)
        .ok()
        .and_then(|v| serde_json::to_string(&v).ok())
        .is_some_and(|back| back == tok)
}

#[cfg(test)]
mod tests {
    use super::super::genai::render_messages;
    use super::*;

    fn shapes() -> Vec<MessageShape> {
        vec![
            MessageShape::InputList,
            MessageShape::InputOne,
            MessageShape::OutputOne {
                finish_reason: "stop".into(),
            },
            MessageShape::SystemInstructions,
            MessageShape::ToolDefinitions,
        ]
    }

    /// Same bytes as the reference, whichever path renders.
    fn same(raw: &str) -> bool {
        let mut fast_used = false;
        for shape in shapes() {
            let reference = render_messages(raw.as_bytes(), &shape);
            if let Some(fast) = render(raw.as_bytes(), &shape) {
                fast_used = true;
                assert_eq!(fast, reference, "{shape:?} of {raw}");
            }
        }
        fast_used
    }

    #[test]
    fn matches_the_reference_on_every_shape() {
        let fast = [
            r#"[{"role":"user","parts":[{"text":"hi \"there\"\n\u0001é"},{"inlineData":{"mimeType":"image/png","data":"AAA"}}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1,"b":[1.5,-2,"x"],"c":null},"id":"c1"}},{"text":"t","thought":true},{"executableCode":{}}]},{"parts":[{"functionResponse":{"name":"f"}}]}]"#,
            r#"{"role":"model","parts":[{"functionCall":{}}]}"#,
            r#"{"role":7,"parts":{"x":1}}"#,
            r#"{"parts":[1,null,"s",{"functionCall":null,"text":"t"},{"functionResponse":{"id":3,"response":[1,2]}}]}"#,
            r#""be nice""#,
            r#"{"role":"system","parts":[{"text":"a"}]}"#,
            r#"{"parts":null,"text":"ignored"}"#,
            r#"{"text":"a part"}"#,
            r#"["a",{"text":"b"},["c",{"parts":[{"text":"d"}]}],5,null]"#,
            r#"[{"functionDeclarations":[{"name":"f","description":"d","parameters":{"type":"OBJECT"}},{"name":"g","parametersJsonSchema":{"type":"object"}},{"name":"h","parameters":null},7]},{"googleSearch":{}},3]"#,
            r#"[]"#,
            r#"null"#,
            r#"5"#,
            r#"[{"functionDeclarations":"x"}]"#,
            r#"[5,[1,{"a":2}],"s",true,null,{"role":"user"},{"role":null,"parts":[{"inlineData":"x","functionCall":[1],"text":"t\"q\u0002"},{"inlineData":{"mimeType":5}},{"functionResponse":{"response":null,"id":null}}]}]"#,
            r#"{"role":"model","parts":[{"functionCall":{"args":"just a string"}},{"functionResponse":{"response":[]}}],"extra":{"deep":[[[{}]]]}}"#,
            r#"[{"role":"user","parts":[{"functionResponse":{"id":"x","name":"f","response":{"big":12345678901234567,"f":0.25,"s":"\u001f\\/"}}}]}]"#,
        ];
        for raw in fast {
            assert!(same(raw), "the fast path rendered nothing for {raw}");
        }
    }

    #[test]
    fn gives_way_to_the_reference_where_a_copy_could_differ() {
        let slow = [
            // whitespace, a long integer, exponents, non-canonical escapes
            r#"[{"role":"user","parts":[{"functionCall":{"args":{"a": 1}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":123456789012345678901}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":1e+21}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":0.0000012345}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":"\/\u00e9\u000A\u0008"}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":-0}}}]}]"#,
            // lone surrogates, duplicate keys, invalid JSON
            r#"[{"role":"user","parts":[{"text":"\ud800"}]}]"#,
            r#"[{"role":"user","role":"model","parts":[]}]"#,
            r#"[{"role":"user""#,
            "not json",
        ];
        for raw in slow {
            for shape in shapes() {
                let reference = render_messages(raw.as_bytes(), &shape);
                if let Some(fast) = render(raw.as_bytes(), &shape) {
                    assert_eq!(fast, reference, "{shape:?} of {raw}");
                }
            }
        }
        assert!(render(
            br#"[{"parts":[{"functionCall":{"args":{"a": 1}}}]}]"#,
            &MessageShape::InputList
        )
        .is_none());
        assert!(render(b"not json", &MessageShape::InputList).is_none());
    }

    #[test]
    fn canonical_text() {
        assert!(canonical(
            r#"{"a":[1,-2,1.5,"x\n\u001f"],"b":null,"c":true}"#
        ));
        assert!(!canonical(r#"{"a" :1}"#));
        assert!(!canonical(r#"{"a":"\u00e9"}"#));
        assert!(!canonical(r#"{"a":"\u001F"}"#));
        assert!(!canonical(r#"{"a":"\u000a"}"#));
        assert!(!canonical(r#"{"a":1234567890123456789}"#));
    }

    #[test]
    #[ignore = "prints figures: FIGURES_HISTORY=file.json"]
    fn probe_history() {
        let h = std::fs::read(std::env::var("FIGURES_HISTORY").unwrap()).unwrap();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let r = render(&h, &MessageShape::InputList);
            println!(
                "fast: {:?} in {:?}",
                r.as_ref().map(|s| s.len()),
                t.elapsed()
            );
        }
        let t = std::time::Instant::now();
        println!(
            "canonical {} in {:?}",
            canonical(std::str::from_utf8(&h).unwrap()),
            t.elapsed()
        );
        let t = std::time::Instant::now();
        let v: Vec<&RawValue> = serde_json::from_slice(&h).unwrap();
        println!("rawvalue parse {} in {:?}", v.len(), t.elapsed());
        let t = std::time::Instant::now();
        let r = render_messages(&h, &MessageShape::InputList);
        println!("ref: {:?} in {:?}", r.len(), t.elapsed());
    }
}
