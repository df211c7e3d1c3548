//! Delivery behaviour against the loopback receiver.

use super::collector::{Collector, Reply};
use super::*;
use crate::trace::sink::{SinkWarning, SpanSink};
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The texts of the warnings `sink` raised since the last call.
fn texts(sink: &OtlpSink) -> Vec<String> {
    sink.take_warnings().into_iter().map(|w| w.text).collect()
}

const WAIT: Duration = Duration::from_secs(5);

#[test]
fn posts_protobuf_with_headers_to_the_endpoint() {
    let collector = Collector::start(vec![]);
    let mut c = config(&collector.url("/custom/v1/traces"));
    // A loopback collector gets no gzip unless it is asked for.
    c.gzip = true;
    c.headers = vec![
        ("x-tenant".into(), "t1".into()),
        ("Content-Type".into(), "application/json".into()),
    ];
    let sink = start(c);
    sink.on_end(span("a"));
    sink.on_end(error_span("b"));
    assert!(sink.force_flush(WAIT));
    let got = collector.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/custom/v1/traces");
    assert_eq!(r.header("content-type"), Some("application/x-protobuf"));
    assert_eq!(
        r.headers
            .iter()
            .filter(|(k, _)| k == "content-type")
            .count(),
        1
    );
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("x-tenant"), Some("t1"));
    assert!(r
        .header("user-agent")
        .is_some_and(|ua| ua.starts_with("adk-native-plugins/")));
    assert_eq!(span_names(&got), vec!["a", "b"]);
    assert_eq!(sink.dropped_count(), 0);
    assert!(texts(&sink).is_empty());
    sink.shutdown(WAIT);
}

#[test]
fn uncompressed_to_a_loopback_collector_by_default() {
    let collector = Collector::start(vec![]);
    let c = config(&collector.url("/v1/traces"));
    assert!(!c.gzip);
    let sink = start(c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let got = collector.received();
    assert_eq!(got[0].header("content-encoding"), None);
    assert_eq!(span_names(&got), vec!["a"]);
}

#[test]
fn full_batches_go_without_a_flush_and_the_schedule_sends_the_rest() {
    let collector = Collector::start(vec![]);
    let mut c = config(&collector.url("/v1/traces"));
    c.max_export_batch_size = 2;
    c.scheduled_delay_millis = 300;
    let sink = start(c);
    let t0 = Instant::now();
    for i in 0..5 {
        sink.on_end(span(&format!("s{i}")));
    }
    // Two full batches at once, the odd span after the scheduled delay.
    let got = collector.wait_for(2, WAIT);
    assert_eq!(span_names(&got[..2]), vec!["s0", "s1", "s2", "s3"]);
    let got = collector.wait_for(3, WAIT);
    assert_eq!(got.len(), 3);
    assert_eq!(span_names(&got[2..]), vec!["s4"]);
    assert!(
        got[2].at - t0 >= Duration::from_millis(250),
        "{:?}",
        got[2].at - t0
    );
    assert!(sink.force_flush(WAIT));
}

#[test]
fn force_flush_waits_for_the_collectors_answer() {
    let collector = Collector::start(vec![Reply::Slow(Duration::from_millis(400))]);
    let sink = start(config(&collector.url("/v1/traces")));
    // Nothing pending: at once.
    let t = Instant::now();
    assert!(sink.force_flush(WAIT));
    assert!(t.elapsed() < Duration::from_millis(100));
    sink.on_end(span("a"));
    let t = Instant::now();
    assert!(sink.force_flush(WAIT));
    assert!(
        t.elapsed() >= Duration::from_millis(350),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(collector.received().len(), 1);
    // A flush that runs out of time says so.
    let collector = Collector::start(vec![Reply::Slow(Duration::from_millis(600))]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("b"));
    assert!(!sink.force_flush(Duration::from_millis(100)));
    assert!(sink.force_flush(WAIT));
}

#[test]
fn retries_503_and_delivers_exactly_once() {
    let collector = Collector::start(vec![Reply::status(503), Reply::status(502)]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    std::thread::sleep(Duration::from_millis(200));
    let got = collector.received();
    assert_eq!(got.len(), 3, "503, 502, then 200 — and nothing after");
    assert_eq!(span_names(&got), vec!["a", "a", "a"]);
    assert_eq!(sink.dropped_count(), 0);
    assert!(texts(&sink).is_empty());
}

#[test]
fn honours_retry_after() {
    let collector = Collector::start(vec![Reply::Answer(
        429,
        vec![("Retry-After", "1".into())],
        Vec::new(),
    )]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let got = collector.received();
    assert_eq!(got.len(), 2);
    let gap = got[1].at - got[0].at;
    assert!(gap >= Duration::from_millis(950), "{gap:?}");
    assert!(gap < Duration::from_millis(2500), "{gap:?}");
    assert_eq!(sink.dropped_count(), 0);
}

#[test]
fn retry_after_beyond_the_budget_gives_up_at_once() {
    let collector = Collector::start(vec![Reply::Answer(
        503,
        vec![("Retry-After", "120".into())],
        Vec::new(),
    )]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    let t = Instant::now();
    assert!(sink.force_flush(WAIT));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(collector.received().len(), 1);
    assert_eq!(sink.dropped_count(), 1);
    let w = texts(&sink);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("exportTimeoutMillis") && w[0].contains("503"),
        "{w:?}"
    );
}

#[test]
fn connection_refused_then_up_delivers() {
    // A port nobody listens on yet.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let sink = start(config(&format!("http://{addr}/v1/traces")));
    sink.on_end(span("a"));
    assert!(!sink.force_flush(Duration::from_millis(300)));
    let listener = TcpListener::bind(addr).expect("rebind the same port");
    let collector = Collector::start_on(listener, vec![], Reply::status(200));
    assert!(sink.force_flush(WAIT));
    assert_eq!(span_names(&collector.received()), vec!["a"]);
    assert_eq!(sink.dropped_count(), 0);
}

#[test]
fn a_hanging_collector_never_blocks_on_end_and_the_batch_is_dropped_at_the_timeout() {
    let collector = Collector::always(Reply::Hang);
    let mut c = config(&collector.url("/v1/traces"));
    c.export_timeout_millis = 300;
    c.max_export_batch_size = 10;
    c.max_queue_size = 20;
    let sink = start(c);
    let t = Instant::now();
    for i in 0..10 {
        sink.on_end(span(&format!("s{i}")));
    }
    assert_eq!(collector.wait_for(1, WAIT).len(), 1);
    // The worker is stuck in the request now: on_end stays a queue push
    // (the queue overflows: 980 of these are dropped at once).
    let pushes = Instant::now();
    for i in 0..1000 {
        sink.on_end(span(&format!("t{i}")));
    }
    assert!(
        pushes.elapsed() < Duration::from_millis(200),
        "{:?}",
        pushes.elapsed()
    );
    assert_eq!(sink.dropped_count(), 980);
    // Each of the three batches gets its own 300 ms and is given up on.
    assert!(sink.force_flush(WAIT));
    let elapsed = t.elapsed();
    assert!(elapsed >= Duration::from_millis(850), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(3000), "{elapsed:?}");
    assert_eq!(sink.dropped_count(), 1010);
    assert_eq!(collector.received().len(), 3);
    let w = texts(&sink);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w.iter().any(|w| w.contains("exportTimeoutMillis (300 ms")),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.contains("queue is full")), "{w:?}");
}

#[test]
fn queue_overflow_drops_the_oldest_and_counts_them() {
    let collector = Collector::start(vec![Reply::Slow(Duration::from_millis(500))]);
    let mut c = config(&collector.url("/v1/traces"));
    c.max_queue_size = 4;
    c.max_export_batch_size = 2;
    let sink = start(c);
    sink.on_end(span("s0"));
    sink.on_end(span("s1"));
    // s0, s1 are in flight (held by the collector); the queue holds 4.
    assert_eq!(collector.wait_for(1, WAIT).len(), 1);
    for i in 2..8 {
        sink.on_end(span(&format!("s{i}")));
    }
    assert_eq!(sink.dropped_count(), 2);
    assert!(sink.force_flush(WAIT));
    assert_eq!(
        span_names(&collector.received()),
        vec!["s0", "s1", "s4", "s5", "s6", "s7"]
    );
    let w = texts(&sink);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("maxQueueSize 4"), "{w:?}");
}

#[test]
fn other_answers_are_not_retried_and_warn_once_per_kind() {
    let collector = Collector::start(vec![
        Reply::status_body(500, "boom"),
        Reply::status_body(400, "bad\n  request"),
        Reply::status_body(400, "bad again"),
        Reply::status(307),
    ]);
    let sink = start(config(&collector.url("/v1/traces")));
    for name in ["a", "b", "c", "d"] {
        sink.on_end(span(name));
        assert!(sink.force_flush(WAIT));
    }
    assert_eq!(collector.received().len(), 4, "one request each, no retry");
    assert_eq!(sink.dropped_count(), 4);
    let w = texts(&sink);
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(w[0].contains("HTTP 500: boom"), "{w:?}");
    assert!(w[1].contains("HTTP 400: bad request"), "{w:?}");
    assert!(w[2].contains("HTTP 307"), "{w:?}");
    assert!(texts(&sink).is_empty());
}

#[test]
fn the_api_key_never_appears_in_a_warning() {
    let key = "wandb-key-0123456789";
    let token = "YXBpOndhbmRiLWtleS0wMTIzNDU2Nzg5";
    let collector = Collector::always(Reply::status_body(
        401,
        &format!("invalid key {key} (Basic {token})"),
    ));
    let mut c = config(&collector.url("/v1/traces?sig=query-secret"));
    c.headers = vec![("Authorization".into(), format!("Basic {token}"))];
    c.secrets = vec![key.into()];
    let sink = start(c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let got = collector.received();
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Basic {token}").as_str())
    );
    let w = texts(&sink);
    assert_eq!(w.len(), 1);
    assert!(!w[0].contains(key) && !w[0].contains(token), "{w:?}");
    assert!(!w[0].contains("query-secret"), "{w:?}");
    assert_eq!(got[0].path, "/v1/traces?sig=query-secret");
    assert!(
        w[0].contains("HTTP 401") && w[0].contains("[redacted]"),
        "{w:?}"
    );
}

#[test]
fn partial_success_counts_rejected_spans() {
    let answer = crate::export::otlp::proto::ExportTraceServiceResponse {
        partial_success: Some(crate::export::otlp::proto::ExportTracePartialSuccess {
            rejected_spans: 1,
            error_message: "span too large".into(),
        }),
    }
    .encode_to_vec();
    let collector = Collector::start(vec![
        // Not marked as protobuf: not read.
        Reply::Answer(
            200,
            vec![("Content-Type", "text/plain".into())],
            answer.clone(),
        ),
        Reply::Answer(
            200,
            vec![("Content-Type", "application/x-protobuf".into())],
            answer,
        ),
    ]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    assert_eq!(sink.dropped_count(), 0);
    drop(sink);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    sink.on_end(span("b"));
    assert!(sink.force_flush(WAIT));
    assert_eq!(sink.dropped_count(), 1);
    let w = texts(&sink);
    assert!(
        w[0].contains("rejected 1 of 2 spans: span too large"),
        "{w:?}"
    );
}

#[test]
fn a_key_the_quote_would_cut_through_is_scrubbed_whole() {
    // The warning quotes 200 characters of the answer: scrubbing after the
    // cut would leave the key's first part.
    let key = "wandbKEY_abcdefghijklmnopqrstuvwxyz0123456789";
    let body = format!("{} key={key}", "x".repeat(180));
    let collector = Collector::always(Reply::status_body(401, &body));
    let mut c = config(&collector.url("/v1/traces"));
    c.secrets = vec![key.into()];
    let sink = start(c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let w = texts(&sink);
    assert_eq!(w.len(), 1);
    assert!(!w[0].contains("wandbKEY"), "{w:?}");
    assert!(w[0].contains("key=[redacted]"), "{w:?}");
}

#[test]
fn warnings_go_to_the_hook_when_one_is_set() {
    let seen: Arc<Mutex<Vec<SinkWarning>>> = Arc::default();
    let collector = Collector::always(Reply::status(404));
    let mut c = config(&collector.url("/v1/traces"));
    let into = Arc::clone(&seen);
    c.on_warning = Some(Arc::new(move |w| into.lock().unwrap().push(w)));
    c.warnings = vec!["from resolution".into()];
    let sink = start(c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].text, "from resolution");
    // A configuration problem is the same whatever the collector.
    assert_eq!(seen[0].kind, "config from resolution");
    assert!(seen[1].text.contains("HTTP 404"));
    // The kind names the problem, not the collector's words.
    assert_eq!(
        seen[1].kind,
        format!("otlp status-404 {}", collector.url("/v1/traces"))
    );
    assert!(texts(&sink).is_empty());
}

#[test]
fn shutdown_flushes_stops_and_is_idempotent() {
    let collector = Collector::start(vec![]);
    let sink = start(config(&collector.url("/v1/traces")));
    for name in ["a", "b", "c"] {
        sink.on_end(span(name));
    }
    let t = Instant::now();
    sink.shutdown(WAIT);
    assert_eq!(span_names(&collector.received()), vec!["a", "b", "c"]);
    // The exporter has exited (shutdown joined it): what it handed back
    // last is freed, though no span will end to take it (give_back.rs).
    assert!(!sink.shared.given_back.holds());
    sink.shutdown(WAIT);
    assert!(t.elapsed() < Duration::from_secs(2));
    // Later spans go nowhere; flushing still answers.
    sink.on_end(span("late"));
    assert!(sink.force_flush(WAIT));
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(collector.received().len(), 1);
    assert_eq!(sink.dropped_count(), 0);
}

#[test]
fn shutdown_is_bounded_when_the_collector_hangs() {
    let collector = Collector::always(Reply::Hang);
    let mut c = config(&collector.url("/v1/traces"));
    c.export_timeout_millis = 30_000;
    c.request_timeout_millis = 30_000;
    c.max_export_batch_size = 1;
    let sink = start(c);
    sink.on_end(span("a"));
    assert_eq!(collector.wait_for(1, WAIT).len(), 1);
    sink.on_end(span("b"));
    let t = Instant::now();
    sink.shutdown(Duration::from_millis(300));
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_secs(2),
        "{took:?}"
    );
}

#[test]
fn an_idle_exporter_thread_sleeps() {
    let collector = Collector::start(vec![]);
    let mut c = config(&collector.url("/v1/traces"));
    c.scheduled_delay_millis = 50;
    let sink = start(c);
    std::thread::sleep(Duration::from_millis(100));
    let idle = sink.worker_wakeups();
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        sink.worker_wakeups(),
        idle,
        "no wake-ups with nothing queued"
    );
    sink.on_end(span("a"));
    assert_eq!(collector.wait_for(1, WAIT).len(), 1);
    assert!(sink.force_flush(WAIT));
    std::thread::sleep(Duration::from_millis(100));
    let after = sink.worker_wakeups();
    assert!(after > idle);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        sink.worker_wakeups(),
        after,
        "asleep again after the export"
    );
}

#[test]
fn an_idle_exporter_holds_no_exported_spans() {
    let collector = Collector::start(vec![]);
    let sink = start(config(&collector.url("/v1/traces")));
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    // The batch went back for the span model's thread to free; no span
    // ended since, so the exporter frees it itself before it sleeps.
    let deadline = Instant::now() + WAIT;
    while sink.shared.given_back.holds() {
        assert!(Instant::now() < deadline, "still held");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(collector.received().len(), 1);
}

#[test]
fn https_uses_rustls_and_a_failed_handshake_is_survived() {
    // A "server" that answers a TLS ClientHello with plain text.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = std::thread::spawn(move || {
        use std::io::Write;
        listener.set_nonblocking(true).expect("nonblocking");
        let until = Instant::now() + Duration::from_secs(3);
        let mut served = 0;
        while Instant::now() < until && served < 1 {
            match listener.accept() {
                Ok((mut s, _)) => {
                    let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\nnot tls");
                    served += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        served
    });
    let mut c = config(&format!("https://{addr}/v1/traces"));
    c.export_timeout_millis = 300;
    let sink = start(c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT), "the exporter thread survived");
    assert_eq!(sink.dropped_count(), 1);
    let w = texts(&sink);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("TLS") && w[0].contains("1 span was dropped"),
        "{w:?}"
    );
    assert!(server.join().expect("server") >= 1);
}

#[test]
fn start_rejects_a_non_http_endpoint() {
    for bad in ["", "localhost:4318", "ftp://x/y"] {
        assert!(OtlpSink::start(config(bad)).is_err(), "{bad}");
    }
}

#[test]
#[ignore = "prints figures; run with --ignored --nocapture"]
fn figures_on_end_and_encoding() {
    let collector = Collector::start(vec![]);
    let mut c = config(&collector.url("/v1/traces"));
    c.max_queue_size = 1_000_000;
    c.max_export_batch_size = 512;
    let sink = start(c.clone());
    let spans: Vec<SpanData> = (0..100_000).map(|i| span(&format!("s{i}"))).collect();
    let count = spans.len() as u32;
    let pushed = spans.clone();
    // on_end alone (the spans exist already), while the worker exports.
    let t = Instant::now();
    for s in pushed {
        sink.on_end(s);
    }
    let per = t.elapsed() / count;
    println!("on_end: {per:?} per span over {count} (worker exporting meanwhile)");
    let t = Instant::now();
    assert!(sink.force_flush(Duration::from_secs(60)));
    println!("export of {count} spans to loopback: {:?}", t.elapsed());
    assert_eq!(sink.dropped_count(), 0);
    let mut encoder = crate::export::otlp::encode::Encoder::new(&c);
    let batch = &spans[..512];
    let rounds = 200;
    let (mut bytes, mut zipped) = (0, 0);
    for _ in 0..20 {
        bytes = encoder.raw(&encoder.prepare(batch.to_vec())).len();
        zipped = encoder.body(&encoder.prepare(batch.to_vec())).bytes.len();
    }
    // Spans are prepared on the JavaScript thread (on_end): before the clock.
    let prepared = encoder.prepare(batch.to_vec());
    let t = Instant::now();
    for _ in 0..rounds {
        bytes = encoder.raw(&prepared).len();
    }
    let enc = t.elapsed() / rounds;
    let t = Instant::now();
    for _ in 0..rounds {
        zipped = encoder.body(&prepared).bytes.len();
    }
    let gz = t.elapsed() / rounds;
    println!("encode 512 spans: {enc:?} ({bytes} B); encode+gzip: {gz:?} ({zipped} B)");
}

#[test]
fn weave_options_reach_the_collector_as_headers_not_resource() {
    use crate::export::config::{resolve, ExportOptions, ExporterChoice, WeaveOptions};
    let collector = Collector::start(vec![]);
    let options = ExportOptions {
        weave: Some(WeaveOptions {
            project: "my-entity/my-project".into(),
            api_key: None,
            base_url: Some(collector.url("/")),
        }),
        service_name: Some("svc".into()),
        ..Default::default()
    };
    let env = |k: &str| (k == "WANDB_API_KEY").then(|| "key-from-env-123".to_string());
    let ExporterChoice::Otlp(c) = resolve(&options, &env).expect("resolves") else {
        panic!("not otlp")
    };
    let sink = start(*c);
    sink.on_end(span("a"));
    assert!(sink.force_flush(WAIT));
    let got = collector.received();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.path, "/agents/otel/v1/traces");
    assert_eq!(
        r.header("authorization"),
        Some("Basic YXBpOmtleS1mcm9tLWVudi0xMjM=")
    );
    assert_eq!(r.header("project_id"), Some("my-entity/my-project"));
    let req = decode(r);
    let resource = req.resource_spans[0].resource.as_ref().expect("resource");
    let shown = format!("{resource:?}");
    assert!(shown.contains("svc"), "{shown}");
    assert!(
        !shown.contains("my-entity") && !shown.contains("my-project"),
        "{shown}"
    );
    assert!(!shown.contains("key-from-env"), "{shown}");
}
