//! Figures (ignored tests): what the exporter thread spends per span on
//! spans shaped like the export pipeline benchmark's (5 per invocation:
//! two chat spans with tool definitions, system instruction and history,
//! a tool span, two agent spans).
//!   cargo test --release --lib figures_ -- --ignored --nocapture

use super::*;
use crate::trace::attributes::deferred;
use crate::trace::genai::MessageShape;
use std::time::{Duration, Instant};

const USER: &str = r#"{"role":"user","parts":[{"text":"Weather in Paris?"}]}"#;
const CALL: &str = r#"{"role":"model","parts":[{"functionCall":{"id":"adk-2ea948c6-934d-4c7f-99eb-c8927e243d9f","args":{"city":"Paris"},"name":"lookup"}}]}"#;
const RESPONSE: &str = r#"{"role":"user","parts":[{"functionResponse":{"id":"adk-2ea948c6-934d-4c7f-99eb-c8927e243d9f","name":"lookup","response":{"city":"Paris","weather":"sunny","celsius":21}}}]}"#;
const ANSWER: &str = r#"{"role":"model","parts":[{"text":"Sunny in Paris (17)."}]}"#;
const SYSTEM: &str = r#""Answer briefly.\n\nYou are an agent. Your internal name is \"weather_agent\".\n\nThe description about you is \"Answers weather questions.\"""#;
const TOOLS: &str = r#"[{"functionDeclarations":[{"name":"lookup","description":"Looks up the weather for a city.","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}]"#;

fn s(v: &str) -> AttributeValue {
    AttributeValue::String(v.to_string())
}

fn base(name: &str, op: &str) -> SpanData {
    SpanData {
        trace_id: [0xab; 16],
        span_id: [1, 2, 3, 4, 5, 6, 7, 8],
        parent_span_id: Some([9; 8]),
        name: name.to_string(),
        start_time_unix_nano: 1_700_000_000_000_000_000,
        end_time_unix_nano: 1_700_000_000_500_000_000,
        attributes: vec![
            ("gen_ai.operation.name".into(), s(op)),
            ("gen_ai.provider.name".into(), s("gemini")),
            (
                "gen_ai.conversation.id".into(),
                s("393a2dea-4a8a-44de-a5ae-66da4b63c46d"),
            ),
            ("gen_ai.agent.name".into(), s("weather_agent")),
        ],
        status: Status::default(),
        remote_parent: false,
        parent_is_remote: false,
        trace_state: None,
    }
}

fn chat(history: &[&str], output: &str, finish: &str) -> SpanData {
    let mut sp = base("chat scripted-model", "chat");
    let a = &mut sp.attributes;
    a.push(("gen_ai.request.model".into(), s("scripted-model")));
    a.push((
        "gen_ai.tool.definitions".into(),
        deferred(TOOLS, MessageShape::ToolDefinitions, None),
    ));
    a.push((
        "gen_ai.system_instructions".into(),
        deferred(SYSTEM, MessageShape::SystemInstructions, None),
    ));
    a.push((
        "gen_ai.input.messages".into(),
        deferred(
            format!("[{}]", history.join(",")),
            MessageShape::InputList,
            None,
        ),
    ));
    a.push((
        "gen_ai.output.messages".into(),
        deferred(
            output,
            MessageShape::OutputOne {
                finish_reason: finish.into(),
            },
            None,
        ),
    ));
    a.push(("gen_ai.output.type".into(), s("text")));
    sp
}

/// The five spans of one benchmark invocation.
pub fn invocation_spans() -> Vec<SpanData> {
    let mut tool = base("execute_tool lookup", "execute_tool");
    tool.attributes.extend([
        ("gen_ai.tool.name".into(), s("lookup")),
        (
            "gen_ai.tool.call.id".into(),
            s("adk-2ea948c6-934d-4c7f-99eb-c8927e243d9f"),
        ),
        (
            "gen_ai.tool.call.arguments".into(),
            s(r#"{"city":"Paris"}"#),
        ),
        (
            "gen_ai.tool.call.result".into(),
            s(r#"{"city":"Paris","weather":"sunny","celsius":21}"#),
        ),
    ]);
    let mut agent = base("invoke_agent weather_agent", "invoke_agent");
    agent.attributes.extend([
        (
            "gen_ai.agent.id".into(),
            s("e-9591f0c0-2a46-4867-95a8-a661a22c0f81"),
        ),
        (
            "gen_ai.agent.description".into(),
            s("Answers weather questions."),
        ),
    ]);
    let mut root = agent.clone();
    root.attributes.extend([
        (
            "weave.google_adk.invocation_id".into(),
            s("e-9591f0c0-2a46-4867-95a8-a661a22c0f81"),
        ),
        ("weave.google_adk.app_name".into(), s("export_bench")),
        ("weave.google_adk.user_id".into(), s("u")),
        (
            "gen_ai.input.messages".into(),
            deferred(USER, MessageShape::InputOne, None),
        ),
        (
            "gen_ai.output.messages".into(),
            deferred(
                ANSWER,
                // The root's output: no finish reason of its own.
                MessageShape::OutputOne {
                    finish_reason: String::new(),
                },
                None,
            ),
        ),
        ("gen_ai.output.type".into(), s("text")),
    ]);
    vec![
        chat(&[USER], CALL, "stop"),
        tool,
        chat(&[USER, CALL, RESPONSE], ANSWER, "stop"),
        agent,
        root,
    ]
}

#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn figures_worker_per_span() {
    let c = config("http://127.0.0.1:9/v1/traces");
    let mut encoder = crate::export::otlp::encode::Encoder::new(&c);
    let batch: Vec<SpanData> = (0..103)
        .flat_map(|_| invocation_spans())
        .take(512)
        .collect();
    let rounds = 300u32;
    let copies = |n: u32| -> Vec<Vec<SpanData>> { (0..n).map(|_| batch.clone()).collect() };
    let mut best = [Duration::MAX; 3];
    let mut sizes = (0, 0);
    for _ in 0..3 {
        let inputs = copies(rounds);
        let t = Instant::now();
        for b in inputs {
            for sp in &b {
                for (_, v) in &sp.attributes {
                    if let AttributeValue::Deferred(d) = v {
                        std::hint::black_box(d.render());
                    }
                }
            }
        }
        best[0] = best[0].min(t.elapsed() / rounds);
        // Spans are prepared on the JavaScript thread (on_end): before the clock.
        let inputs: Vec<_> = copies(rounds)
            .into_iter()
            .map(|b| encoder.prepare(b))
            .collect();
        let t = Instant::now();
        for b in inputs {
            sizes.0 = encoder.raw(&b).len();
        }
        best[1] = best[1].min(t.elapsed() / rounds);
        let inputs: Vec<_> = copies(rounds)
            .into_iter()
            .map(|b| encoder.prepare(b))
            .collect();
        let t = Instant::now();
        for b in inputs {
            sizes.1 = encoder.body(&b).bytes.len();
        }
        best[2] = best[2].min(t.elapsed() / rounds);
    }
    let per = |d: Duration| d.as_nanos() as f64 / 512.0 / 1000.0;
    println!(
        "per span (512-span batches of benchmark-shaped spans): render deferred {:.2} µs, \
render+encode {:.2} µs ({} B/batch), render+encode+gzip {:.2} µs ({} B/batch)",
        per(best[0]),
        per(best[1]),
        sizes.0,
        per(best[2]),
        sizes.1
    );
}

/// A chat span with a big history (FIGURES_HISTORY: a JSON file of Contents,
/// e.g. bench/helpers/history.mjs's buildHistory(1e6) stringified).
#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn figures_worker_big_history() {
    let Ok(path) = std::env::var("FIGURES_HISTORY") else {
        println!("FIGURES_HISTORY not set");
        return;
    };
    let history = std::fs::read_to_string(path).expect("history file");
    let c = config("http://127.0.0.1:9/v1/traces");
    let mut encoder = crate::export::otlp::encode::Encoder::new(&c);
    let mut span = base("chat scripted-model", "chat");
    span.attributes.push((
        "gen_ai.input.messages".into(),
        deferred(history.clone(), MessageShape::InputList, None),
    ));
    let rounds = 20u32;
    let mut best = [Duration::MAX; 3];
    let mut sizes = (0, 0);
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..rounds {
            if let Some(AttributeValue::Deferred(d)) = span.attribute("gen_ai.input.messages") {
                std::hint::black_box(d.render());
            }
        }
        best[0] = best[0].min(t.elapsed() / rounds);
        let inputs: Vec<_> = (0..rounds)
            .map(|_| encoder.prepare(vec![span.clone()]))
            .collect();
        let t = Instant::now();
        for b in inputs {
            sizes.0 = encoder.raw(&b).len();
        }
        best[1] = best[1].min(t.elapsed() / rounds);
        let inputs: Vec<_> = (0..rounds)
            .map(|_| encoder.prepare(vec![span.clone()]))
            .collect();
        let t = Instant::now();
        for b in inputs {
            sizes.1 = encoder.body(&b).bytes.len();
        }
        best[2] = best[2].min(t.elapsed() / rounds);
    }
    println!(
        "one chat span, {} B history: render {:?}, render+encode {:?} ({} B), render+encode+gzip {:?} ({} B)",
        history.len(),
        best[0],
        best[1],
        sizes.0,
        best[2],
        sizes.1
    );
}
