//! GenAI message JSON from the JSON of ADK objects captured on the
//! JavaScript thread (`JSON.stringify` output): reads it once with borrowed
//! fields (no `serde_json::Value` tree, no maps built and hashed) and writes
//! the GenAI JSON straight into one buffer; tool arguments, tool results and
//! parameter schemas are copied as they are, so they keep JavaScript's own
//! number and escape forms.
//!
//! It always renders: a lone surrogate escape (JavaScript writes `\ud800`
//! for an unpaired one) is read as U+FFFD, as span names and attribute
//! texts show it, and a copied value keeps its escape; text it cannot read
//! (which `JSON.stringify` never makes) renders as `null` would. The tests
//! hold it to the plain reference rendering (`genai_reference`).

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

/// A system instruction object: a Content (it has `parts`, even `null`) or
/// else a Part, read as such.
#[derive(Deserialize)]
struct SystemIn<'a> {
    #[serde(default, borrow)]
    parts: Field<'a>,
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

/// The shape's JSON of bytes that may not be UTF-8.
pub fn render(raw: &[u8], shape: &MessageShape) -> String {
    // Valid UTF-8 in practice: the strict check is several times faster
    // than the lossy reading, which only runs when it fails.
    match std::str::from_utf8(raw) {
        Ok(text) => render_str(text, shape),
        Err(_) => render_str(&String::from_utf8_lossy(raw), shape),
    }
}

/// The shape's JSON. Captured JSON arrives as Rust strings, already
/// checked when it was decoded.
pub fn render_str(text: &str, shape: &MessageShape) -> String {
    let text = readable_surrogates(text);
    render_text(&text, shape)
        .or_else(|| render_text("null", shape))
        .unwrap_or_else(|| "[]".into())
}

/// `text` with each lone surrogate escape (`\ud800`, not part of a pair)
/// replaced by `\ufffd`, which serde_json reads; borrowed when it has none.
pub(crate) fn readable_surrogates(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let surrogate = |at: usize| -> Option<u16> {
        let hex = b.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        let v = u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
        (0xD800..=0xDFFF).contains(&v).then_some(v)
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    // Backslashes are rare outside string escapes: jump between them.
    while i < b.len() {
        let Some(at) = memchr::memchr(b'\\', &b[i..]) else {
            break;
        };
        i += at;
        let Some(unit) = surrogate(i) else {
            // Any other escape: skip it whole (`\\` must not start a new one).
            i += 2;
            continue;
        };
        let paired = (0xD800..0xDC00).contains(&unit)
            && surrogate(i + 6).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
        if paired {
            i += 12;
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[copied..i]);
        o.push_str("\\ufffd");
        i += 6;
        copied = i;
    }
    match out {
        Some(mut o) => {
            o.push_str(&text[copied..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(text),
    }
}

/// The shape's JSON, or `None` when `text` is not JSON it can read.
fn render_text(text: &str, shape: &MessageShape) -> Option<String> {
    let mut out = Vec::with_capacity(text.len() + 64);
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

/// A copied value: `{}` for null or absent.
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
    out.extend_from_slice(v.get().as_bytes());
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

/// One GenAI part of a message or system instruction (the reference's
/// `genai::part`).
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

fn comma(out: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        out.push(b',');
    }
    *first = false;
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
            // The same parts, read and written as a message's are.
            let o: SystemIn = parse(v)?;
            match o.parts.0 {
                Some(parts) => {
                    let parts: ListOf<ObjectOr<Part>> = parse(parts)?;
                    for p in parts.0.into_iter().flatten().filter_map(|p| p.0) {
                        one_part(out, p, first)?;
                    }
                }
                None => one_part(out, parse(v)?, first)?,
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
                // `parameters ?? parametersJsonSchema ?? null`, as Weave reads
                // a declaration.
                let given = [d.parameters.0, d.parameters_json_schema.0]
                    .into_iter()
                    .flatten()
                    .find(|r| kind(r) != b'n');
                match given {
                    Some(p) => write_copy(out, p)?,
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(b",\"type\":\"function\"}");
            }
        }
    }
    out.push(b']');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::super::genai_reference::{canonical, render_messages};
    use super::*;
    use serde_json::Value;

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

    fn value(json: &str) -> Value {
        serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
    }

    #[test]
    fn matches_the_reference_byte_for_byte_on_javascript_json() {
        let inputs = [
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
        for raw in inputs {
            assert!(canonical(raw), "{raw}");
            for shape in shapes() {
                let reference = render_messages(raw.as_bytes(), &shape);
                assert_eq!(
                    render(raw.as_bytes(), &shape),
                    reference,
                    "{shape:?} of {raw}"
                );
            }
        }
    }

    #[test]
    fn copies_values_as_javascript_wrote_them() {
        // Whitespace, long integers, exponents and other escapes (none of
        // which JSON.stringify writes, but JSON all the same) are copied as
        // they are: the same values as the reference's, in their own form.
        let inputs = [
            r#"[{"role":"user","parts":[{"functionCall":{"args":{"a": 1}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":12345678901234567890}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":1e+21}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":0.0000012345}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":"\/\u00e9\u000A\u0008"}}}]}]"#,
            r#"[{"parts":[{"functionCall":{"args":{"a":-0}}}]}]"#,
        ];
        for raw in inputs {
            for shape in shapes() {
                let reference = render_messages(raw.as_bytes(), &shape);
                let out = render(raw.as_bytes(), &shape);
                assert_eq!(value(&out), value(&reference), "{shape:?} of {raw}");
            }
        }
        let out = render(
            br#"[{"parts":[{"functionCall":{"args":{"a":1e+21,"b": [ 2 ]}}}]}]"#,
            &MessageShape::InputList,
        );
        assert_eq!(
            out,
            r#"[{"role":"","parts":[{"type":"tool_call","id":"","name":"","arguments":{"a":1e+21,"b": [ 2 ]}}]}]"#
        );
    }

    #[test]
    fn only_lone_surrogate_escapes_are_replaced() {
        for (text, want) in [
            ("", ""),
            ("plain", "plain"),
            (r"\\", r"\\"),
            (r"ends in \\", r"ends in \\"),
            ("dangling \\", "dangling \\"),
            (r"\\ud800", r"\\ud800"),
            (r"a\ud800", r"a\ufffd"),
            (r"\uDBFF\n\udc00x", r"\ufffd\n\ufffdx"),
            (r"\ud83d\ude00", r"\ud83d\ude00"),
            ("é\\ud800é", "é\\ufffdé"),
        ] {
            assert_eq!(readable_surrogates(text), want, "{text}");
        }
    }

    #[test]
    fn lone_surrogates_lose_one_character_not_the_messages() {
        // JSON.stringify writes an unpaired surrogate as an escape; the
        // reference cannot read it and renders nothing at all.
        let raw = r#"[{"role":"user","parts":[{"text":"a\ud800b"},{"functionCall":{"id":"c\udc00","name":"f","args":{"k":"\udbff"}}}]},{"role":"model","parts":[{"text":"\ud83d\ude00 ok \\ud800"}]}]"#;
        assert_eq!(
            render_messages(raw.as_bytes(), &MessageShape::InputList),
            "[]"
        );
        let out = render(raw.as_bytes(), &MessageShape::InputList);
        assert_eq!(
            value(&out),
            serde_json::json!([
                {"role":"user","parts":[
                    {"type":"text","content":"a\u{FFFD}b"},
                    {"type":"tool_call","id":"c\u{FFFD}","name":"f","arguments":{"k":"\u{FFFD}"}}]},
                {"role":"assistant","parts":[{"type":"text","content":"\u{1F600} ok \\ud800"}]}
            ])
        );
        let out = render(
            br#"{"parts":[{"text":"x\uDBFF"}]}"#,
            &MessageShape::OutputOne {
                finish_reason: "stop".into(),
            },
        );
        assert_eq!(
            out,
            "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\"x\u{FFFD}\"}],\"finish_reason\":\"stop\"}]"
        );
        assert_eq!(
            render(br#""be \udfff nice""#, &MessageShape::SystemInstructions),
            "[{\"type\":\"text\",\"content\":\"be \u{FFFD} nice\"}]"
        );
    }

    #[test]
    fn unreadable_text_renders_as_null_does() {
        for raw in [&b"not json"[..], br#"[{"role":"user""#, b"\xff\xfe"] {
            for shape in shapes() {
                assert_eq!(render(raw, &shape), render(b"null", &shape), "{shape:?}");
                assert_eq!(
                    render(raw, &shape),
                    render_messages(raw, &shape),
                    "{shape:?}"
                );
            }
        }
    }

    #[test]
    #[ignore = "prints figures: FIGURES_HISTORY=file.json"]
    fn probe_history() {
        let h = std::fs::read(std::env::var("FIGURES_HISTORY").unwrap()).unwrap();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let r = render(&h, &MessageShape::InputList);
            println!("render: {} in {:?}", r.len(), t.elapsed());
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
        println!("reference: {} in {:?}", r.len(), t.elapsed());
    }
}
