//! Figures, not tests (ignored; `cargo test --release --lib lifecycle_figures
//! -- --ignored --nocapture`): the span model's own cost for the yardstick's
//! S1 lifecycle (8 spans, content captured), in a warm loop without
//! JavaScript, a floor for what the native side adds per invocation.

use super::inputs::*;
use super::model::Tracer;
use super::sink::SpanSink;
use super::span::SpanData;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Discard;
impl SpanSink for Discard {
    fn on_end(&self, span: SpanData) {
        std::hint::black_box(span);
    }
    fn force_flush(&self, _t: Duration) -> bool {
        true
    }
    fn shutdown(&self, _t: Duration) {}
}

const CONTENTS: &str = r#"[{"role":"user","parts":[{"text":"Hi! I am planning a weekend trip. What is the weather in Paris right now?"}]},{"role":"model","parts":[{"functionCall":{"id":"fc-a1","name":"get_weather","args":{"city":"Paris","units":"metric"}}}]},{"role":"user","parts":[{"functionResponse":{"id":"fc-a1","name":"get_weather","response":{"city":"Paris","weather":"sunny","temperature_c":21,"forecast":[{"day":"tomorrow","weather":"cloudy","high_c":19}]}}}]},{"role":"model","parts":[{"text":"It is sunny in Paris, 21°C, with clouds expected tomorrow."}]},{"role":"user","parts":[{"text":"And in Lyon?"}]}]"#;
const TOOLS: &str = r#"[{"functionDeclarations":[{"name":"get_weather","description":"Get the current weather for a city.","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}},"required":["city"]}}]}]"#;
const CALL: &str = r#"{"role":"model","parts":[{"functionCall":{"id":"fc-x","name":"get_weather","args":{"city":"Lyon"}}}]}"#;
const TEXT: &str = r#"{"role":"model","parts":[{"text":"It is sunny in Lyon, 23°C."}]}"#;
const RESULT: &str = r#"{"city":"Lyon","weather":"sunny","temperature_c":21}"#;

fn request() -> ModelRequest {
    ModelRequest {
        model: Some("gemini-2.5-flash".into()),
        config_json: Some(r#"{"temperature":0.2,"maxOutputTokens":1024}"#.into()),
        tools_json: Some(TOOLS.into()),
        system_json: Some(r#""You are a helpful weather assistant.""#.into()),
        contents_json: Some(CONTENTS.to_string()),
        history: None,
    }
}

fn response(content: &str) -> ModelResponse {
    ModelResponse {
        finish_reason: Some("STOP".into()),
        usage: [Some(812), Some(18), Some(830), None, None],
        content_json: Some(content.into()),
        has_usage: true,
        ..Default::default()
    }
}

fn event(content: Option<&str>, response: Option<(&str, &str)>) -> EventInfo {
    EventInfo {
        author: Some("weather_agent".into()),
        content_json: content.map(Into::into),
        function_responses: response
            .map(|(id, json)| {
                vec![FunctionResponse {
                    id: id.into(),
                    name: "get_weather".into(),
                    response_json: json.into(),
                }]
            })
            .unwrap_or_default(),
        responses_only: response.is_some(),
        ..Default::default()
    }
}

fn lifecycle(t: &mut Tracer, n: u64) {
    let id = format!("e-{n}");
    let id = id.as_str();
    let a = Some("weather_agent");
    t.start(RunStart {
        invocation_id: id.into(),
        session_id: Some("sess-1".into()),
        app_name: Some("app".into()),
        user_id: Some("u".into()),
        root_name: Some("weather_agent".into()),
        root_description: Some("Answers weather questions.".into()),
        agents: vec![AgentInfo {
            name: "weather_agent".into(),
            parent: None,
            description: Some("Answers weather questions.".into()),
            model: Some("gemini-2.5-flash".into()),
            sequential: false,
            looping: false,
        }],
        user_content: Some(r#"{"role":"user","parts":[{"text":"And in Lyon?"}]}"#.into()),
        settings: RunSettings {
            capture: true,
            vertex: false,
            value_limit: None,
            streams: false,
        },
        remote_parent: None,
    });
    t.before_agent(id, a);
    let (c1, c2) = (format!("fc-{n}-1"), format!("fc-{n}-2"));
    let args = || Some(r#"{"city":"Lyon"}"#.to_string());
    t.before_model(id, a, request());
    t.after_model(id, a, response(CALL));
    t.on_event(id, event(Some(CALL), None));
    t.before_tool(id, a, "get_weather", Some(&c1), args());
    t.tool_error(
        id,
        a,
        "get_weather",
        Some(&c1),
        "Error",
        "upstream timed out",
    );
    t.after_tool(id, a, "get_weather", Some(&c1), 0, None);
    t.on_event(
        id,
        event(None, Some((&c1, r#"{"error":"upstream timed out"}"#))),
    );
    t.before_model(id, a, request());
    t.after_model(id, a, response(CALL));
    t.on_event(id, event(Some(CALL), None));
    t.before_tool(id, a, "get_weather", Some(&c2), args());
    t.after_tool(id, a, "get_weather", Some(&c2), 0, None);
    t.on_event(id, event(None, Some((&c2, RESULT))));
    t.before_model(id, a, request());
    t.model_error(id, a, "Error", "model overloaded (503)");
    t.before_model(id, a, request());
    t.after_model(id, a, response(TEXT));
    t.on_event(id, event(Some(TEXT), None));
    t.after_agent(id, a);
    t.finish(id, false);
}

#[test]
#[ignore = "prints figures"]
fn lifecycle_figures() {
    let mut t = Tracer::new(Arc::new(Discard), 10_000);
    for n in 0..2_000 {
        lifecycle(&mut t, n);
    }
    let runs = 20_000u64;
    let start = Instant::now();
    for n in 0..runs {
        lifecycle(&mut t, 10_000 + n);
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / runs as f64;
    let spans = t.ended_spans() as f64 / (runs + 2_000) as f64;
    println!(
        "span model alone: {us:.1} µs per S1 lifecycle ({spans:.0} spans), inputs built included"
    );
}
