use super::*;
use base64::Engine as _;
use std::collections::HashMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn otlp(choice: Result<ExporterChoice, ConfigError>) -> OtlpConfig {
    match choice {
        Ok(ExporterChoice::Otlp(c)) => *c,
        other => panic!("expected otlp, got {other:?}"),
    }
}

fn header<'a>(c: &'a OtlpConfig, name: &str) -> Option<&'a str> {
    c.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn resource<'a>(c: &'a OtlpConfig, name: &str) -> Option<&'a str> {
    c.resource_attributes
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn weave(project: &str, key: Option<&str>) -> Option<WeaveOptions> {
    Some(WeaveOptions {
        project: project.into(),
        api_key: key.map(String::from),
        base_url: None,
    })
}

fn is_type_error(r: Result<ExporterChoice, ConfigError>) -> String {
    match r {
        Err(ConfigError::Type(m)) => m,
        other => panic!("expected a TypeError, got {other:?}"),
    }
}

#[test]
fn unknown_exporter_is_a_type_error() {
    let o = ExportOptions {
        exporter: Some("jaeger".into()),
        ..Default::default()
    };
    let m = is_type_error(resolve(&o, &no_env));
    assert!(m.contains("'jaeger'") && m.contains("'otlp'"), "{m}");
}

#[test]
fn non_otlp_exporter_with_endpoint_or_weave_is_a_type_error() {
    for exporter in ["console", "memory", "none"] {
        let with_endpoint = ExportOptions {
            exporter: Some(exporter.into()),
            endpoint: Some("http://localhost:4318/v1/traces".into()),
            ..Default::default()
        };
        let m = is_type_error(resolve(&with_endpoint, &no_env));
        assert!(m.contains("endpoint"), "{m}");
        let with_weave = ExportOptions {
            exporter: Some(exporter.into()),
            weave: weave("e/p", Some("k123")),
            ..Default::default()
        };
        let m = is_type_error(resolve(&with_weave, &no_env));
        assert!(m.contains("weave"), "{m}");
    }
}

#[test]
fn endpoint_with_weave_is_a_type_error() {
    let o = ExportOptions {
        endpoint: Some("http://localhost:4318/v1/traces".into()),
        weave: weave("e/p", Some("k123")),
        ..Default::default()
    };
    is_type_error(resolve(&o, &no_env));
    // Also with exporter 'otlp'.
    let o = ExportOptions {
        exporter: Some("otlp".into()),
        ..o
    };
    is_type_error(resolve(&o, &no_env));
}

#[test]
fn simple_exporters_need_no_environment() {
    let env = env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")]);
    for (name, want) in [
        ("memory", "Memory"),
        ("console", "Console"),
        ("none", "None"),
    ] {
        let o = ExportOptions {
            exporter: Some(name.into()),
            ..Default::default()
        };
        let got = format!("{:?}", resolve(&o, &env).unwrap());
        assert!(got.starts_with(want), "{name}: {got}");
    }
    let o = ExportOptions {
        exporter: Some("none".into()),
        ..Default::default()
    };
    assert!(matches!(
        resolve(&o, &env),
        Ok(ExporterChoice::None { warning: None })
    ));
}

#[test]
fn weave_without_a_key_says_how_to_give_one() {
    let o = ExportOptions {
        weave: weave("e/p", None),
        ..Default::default()
    };
    match resolve(&o, &no_env) {
        Err(ConfigError::Plain(m)) => {
            assert!(m.contains("apiKey") && m.contains("WANDB_API_KEY"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    // An empty key in the option or the environment is no key.
    let o = ExportOptions {
        weave: weave("e/p", Some("  ")),
        ..Default::default()
    };
    let env = env_of(&[("WANDB_API_KEY", "")]);
    assert!(matches!(resolve(&o, &env), Err(ConfigError::Plain(_))));
}

#[test]
fn weave_endpoint_headers_and_resource() {
    let o = ExportOptions {
        weave: weave("my-team/my-project", None),
        ..Default::default()
    };
    let env = env_of(&[("WANDB_API_KEY", "secret-key-42")]);
    let c = otlp(resolve(&o, &env));
    assert_eq!(c.endpoint, "https://trace.wandb.ai/agents/otel/v1/traces");
    // base64("api:secret-key-42")
    assert_eq!(
        header(&c, "Authorization"),
        Some("Basic YXBpOnNlY3JldC1rZXktNDI=")
    );
    assert_eq!(header(&c, "project_id"), Some("my-team/my-project"));
    for (k, v) in &c.resource_attributes {
        assert!(
            !v.contains("my-team") && !v.contains("my-project"),
            "{k}={v}"
        );
    }
    assert!(c.secrets.iter().any(|s| s == "secret-key-42"));
    // The option's key beats the environment's.
    let o = ExportOptions {
        weave: weave("e/p", Some("from-option")),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &env));
    let expected = base64::engine::general_purpose::STANDARD.encode("api:from-option");
    assert_eq!(
        header(&c, "authorization"),
        Some(format!("Basic {expected}").as_str())
    );
}

#[test]
fn weave_base_url_never_doubles_the_slash() {
    for base in ["https://weave.example.com", "https://weave.example.com/"] {
        let o = ExportOptions {
            exporter: Some("otlp".into()),
            weave: Some(WeaveOptions {
                project: "e/p".into(),
                api_key: Some("k123".into()),
                base_url: Some(base.into()),
            }),
            ..Default::default()
        };
        assert_eq!(
            otlp(resolve(&o, &no_env)).endpoint,
            "https://weave.example.com/agents/otel/v1/traces"
        );
    }
    let bad = ExportOptions {
        weave: Some(WeaveOptions {
            project: "e/p".into(),
            api_key: Some("k123".into()),
            base_url: Some("trace.wandb.ai".into()),
        }),
        ..Default::default()
    };
    is_type_error(resolve(&bad, &no_env));
    is_type_error(resolve(
        &ExportOptions {
            weave: weave(" ", Some("k123")),
            ..Default::default()
        },
        &no_env,
    ));
}

#[test]
fn a_weave_project_no_header_can_carry_is_refused_at_construction() {
    for project in [
        "team/proj\nX-Injected: 1",
        "team/pr\u{7f}oj",
        "team/\u{0}proj",
    ] {
        let message = is_type_error(resolve(
            &ExportOptions {
                weave: weave(project, Some("k123")),
                ..Default::default()
            },
            &no_env,
        ));
        assert!(message.contains("weave.project"), "{message}");
    }
    // Surrounding spaces are trimmed, as before; the project is sent as given.
    let c = otlp(resolve(
        &ExportOptions {
            weave: weave(" team/proj ", Some("k123")),
            ..Default::default()
        },
        &no_env,
    ));
    assert_eq!(header(&c, "project_id"), Some("team/proj"));
}

#[test]
fn weave_headers_join_the_users_headers_and_win() {
    let o = ExportOptions {
        weave: weave("e/p", Some("k123")),
        headers: Some(vec![
            ("x-team".into(), "a".into()),
            ("authorization".into(), "Bearer nope".into()),
        ]),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &no_env));
    assert_eq!(header(&c, "x-team"), Some("a"));
    assert!(header(&c, "authorization").unwrap().starts_with("Basic "));
    assert_eq!(
        c.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
            .count(),
        1
    );
}

#[test]
fn weave_receives_the_environments_otlp_headers_and_its_own_auth_wins() {
    let env = env_of(&[
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-team=t1,Authorization=Bearer%20other",
        ),
        ("WANDB_API_KEY", "k123"),
    ]);
    let o = ExportOptions {
        weave: weave("e/p", None),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &env));
    assert_eq!(header(&c, "x-team"), Some("t1"));
    assert_eq!(header(&c, "authorization"), Some("Basic YXBpOmsxMjM="));
    assert_eq!(c.headers.len(), 3, "{:?}", c);
}

#[test]
fn unsupported_protocol_warns() {
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    ]);
    let c = otlp(resolve(&ExportOptions::default(), &env));
    assert!(
        c.warnings.iter().any(|w| w.contains("grpc")),
        "{:?}",
        c.warnings
    );
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ]);
    assert!(otlp(resolve(&ExportOptions::default(), &env))
        .warnings
        .is_empty());
}

#[test]
fn endpoint_is_used_verbatim_and_env_headers_still_apply() {
    let env = env_of(&[
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-api-key=abc%20def,tenant=t1",
        ),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318"),
    ]);
    let o = ExportOptions {
        endpoint: Some("http://127.0.0.1:9999/custom/path".into()),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &env));
    assert_eq!(c.endpoint, "http://127.0.0.1:9999/custom/path");
    assert_eq!(header(&c, "x-api-key"), Some("abc def"));
    assert_eq!(header(&c, "tenant"), Some("t1"));
}

#[test]
fn headers_option_replaces_env_headers() {
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=env"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-other=env"),
    ]);
    let o = ExportOptions {
        endpoint: Some("http://localhost:4318/v1/traces".into()),
        headers: Some(vec![("x-mine".into(), "1".into())]),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &env));
    assert_eq!(c.headers, vec![("x-mine".to_string(), "1".to_string())]);
}

#[test]
fn bad_header_option_is_a_type_error_without_the_value() {
    let o = ExportOptions {
        endpoint: Some("http://localhost:4318/v1/traces".into()),
        headers: Some(vec![("x-key".into(), "top\nsecret".into())]),
        ..Default::default()
    };
    let m = is_type_error(resolve(&o, &no_env));
    assert!(m.contains("x-key") && !m.contains("secret"), "{m}");
    let o = ExportOptions {
        endpoint: Some("http://localhost:4318/v1/traces".into()),
        headers: Some(vec![("bad header".into(), "v".into())]),
        ..Default::default()
    };
    is_type_error(resolve(&o, &no_env));
}

#[test]
fn env_headers_merge_signal_specific_wins_malformed_warned() {
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "a=1,b=2,garbage"),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "B=3"),
    ]);
    let c = otlp(resolve(&ExportOptions::default(), &env));
    assert_eq!(header(&c, "a"), Some("1"));
    assert_eq!(header(&c, "b"), Some("3"));
    assert_eq!(c.headers.len(), 2);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("OTEL_EXPORTER_OTLP_HEADERS")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn invalid_endpoint_option_is_a_type_error() {
    for bad in [
        "localhost:4318",
        "not a url",
        "ftp://x/v1/traces",
        "",
        "http://127.0.0.1:65536/v1/traces",
        "http://127.0.0.1:99999/v1/traces",
    ] {
        let o = ExportOptions {
            endpoint: Some(bad.into()),
            ..Default::default()
        };
        let m = is_type_error(resolve(&o, &no_env));
        assert!(m.contains("endpoint"), "{m}");
    }
    // The highest port is a port; credentials without a port are no port;
    // an IPv6 host's colons neither.
    for good in [
        "http://127.0.0.1:65535/v1/traces",
        "http://user:secret@collector/v1/traces",
        "http://user:secret@collector:4318/v1/traces",
        "http://[::1]/v1/traces",
        "http://[::1]:4318/v1/traces",
    ] {
        let o = ExportOptions {
            endpoint: Some(good.into()),
            ..Default::default()
        };
        assert!(resolve(&o, &no_env).is_ok(), "{good}");
    }
    // Credentials in a bad URL are not echoed.
    let o = ExportOptions {
        endpoint: Some("gopher://user:hunter22@x".into()),
        ..Default::default()
    };
    let m = is_type_error(resolve(&o, &no_env));
    assert!(!m.contains("hunter22"), "{m}");
}

#[test]
fn env_traces_exporter_values() {
    let c = resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_TRACES_EXPORTER", "none")]),
    );
    assert!(matches!(c, Ok(ExporterChoice::None { warning: None })));
    let c = resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_TRACES_EXPORTER", "console")]),
    );
    assert!(matches!(c, Ok(ExporterChoice::Console { warning: None })));
    // otlp without an endpoint: the OpenTelemetry default URL.
    let c = otlp(resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_TRACES_EXPORTER", "otlp")]),
    ));
    assert_eq!(c.endpoint, "http://localhost:4318/v1/traces");
    // A list: each listed exporter this package has, the others skipped.
    let c = resolve(
        &ExportOptions::default(),
        &env_of(&[
            ("OTEL_TRACES_EXPORTER", "zipkin, console"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ]),
    );
    assert!(matches!(c, Ok(ExporterChoice::Console { warning: None })));
    // An endpoint OTLP cannot use: the console still prints, with a warning.
    match resolve(
        &ExportOptions::default(),
        &env_of(&[
            ("OTEL_TRACES_EXPORTER", "console,otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "not a url"),
        ]),
    ) {
        Ok(ExporterChoice::Console {
            warning:
                Some(NoExportWarning {
                    kind: NoExportKind::BadEndpoint,
                    text,
                }),
        }) => assert!(text.contains("only printed"), "{text}"),
        other => panic!("{other:?}"),
    }
    for list in ["console,otlp", " OTLP , zipkin,console"] {
        match resolve(
            &ExportOptions::default(),
            &env_of(&[("OTEL_TRACES_EXPORTER", list)]),
        ) {
            Ok(ExporterChoice::ConsoleAndOtlp(c)) => {
                assert_eq!(c.endpoint, "http://localhost:4318/v1/traces")
            }
            other => panic!("{list}: {other:?}"),
        }
    }
    // Options name one exporter: the environment's list does not add one.
    let endpoint = ExportOptions {
        endpoint: Some("http://c:4318/v1/traces".into()),
        ..ExportOptions::default()
    };
    let both = env_of(&[("OTEL_TRACES_EXPORTER", "console,otlp")]);
    assert!(matches!(
        resolve(&endpoint, &both),
        Ok(ExporterChoice::Otlp(_))
    ));
    let otlp_only = ExportOptions {
        exporter: Some("otlp".into()),
        ..ExportOptions::default()
    };
    assert!(matches!(
        resolve(&otlp_only, &both),
        Ok(ExporterChoice::Otlp(_))
    ));
    match resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_TRACES_EXPORTER", "jaeger")]),
    ) {
        Ok(ExporterChoice::None {
            warning:
                Some(NoExportWarning {
                    kind: NoExportKind::UnsupportedExporter,
                    text: w,
                }),
        }) => assert!(w.contains("jaeger"), "{w}"),
        other => panic!("{other:?}"),
    }
    // A bad endpoint in the environment: one warning, its sentences whole.
    match resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://c:4318")]),
    ) {
        Ok(ExporterChoice::None {
            warning:
                Some(NoExportWarning {
                    kind: NoExportKind::BadEndpoint,
                    text: w,
                }),
        }) => assert!(
            w.ends_with("'ftp://c:4318' is not an http:// or https:// URL. No spans are exported."),
            "{w}"
        ),
        other => panic!("{other:?}"),
    }
    // The `exporter` option beats the environment.
    let o = ExportOptions {
        exporter: Some("otlp".into()),
        ..Default::default()
    };
    let c = otlp(resolve(&o, &env_of(&[("OTEL_TRACES_EXPORTER", "none")])));
    assert_eq!(c.endpoint, "http://localhost:4318/v1/traces");
}

#[test]
fn env_endpoints() {
    let c = otlp(resolve(
        &ExportOptions::default(),
        &env_of(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://a:1/x/y"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:2"),
        ]),
    ));
    assert_eq!(c.endpoint, "http://a:1/x/y");
    for base in ["http://b:2", "http://b:2/", "http://b:2//"] {
        let c = otlp(resolve(
            &ExportOptions::default(),
            &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", base)]),
        ));
        assert_eq!(c.endpoint, "http://b:2/v1/traces", "{base}");
    }
    let c = otlp(resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://b:2/otlp/")]),
    ));
    assert_eq!(c.endpoint, "https://b:2/otlp/v1/traces");
    // exporter 'otlp' without endpoint reads the environment too.
    let o = ExportOptions {
        exporter: Some("otlp".into()),
        ..Default::default()
    };
    let c = otlp(resolve(
        &o,
        &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://b:2")]),
    ));
    assert_eq!(c.endpoint, "http://b:2/v1/traces");
    // A bad URL in the environment: a warning, nothing exported.
    match resolve(
        &ExportOptions::default(),
        &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "b:2")]),
    ) {
        Ok(ExporterChoice::None {
            warning:
                Some(NoExportWarning {
                    kind: NoExportKind::BadEndpoint,
                    text: w,
                }),
        }) => {
            assert!(w.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{w}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn nothing_configured_warns_how_to_configure() {
    // Empty variables count as unset.
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", ""),
        ("OTEL_TRACES_EXPORTER", " "),
    ]);
    match resolve(&ExportOptions::default(), &env) {
        Ok(ExporterChoice::None {
            warning:
                Some(NoExportWarning {
                    kind: NoExportKind::NothingConfigured,
                    text: w,
                }),
        }) => {
            for needle in [
                "exporter",
                "endpoint",
                "weave",
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "OTEL_TRACES_EXPORTER",
            ] {
                assert!(w.contains(needle), "{needle} missing: {w}");
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn service_name_precedence() {
    let endpoint = || ExportOptions {
        endpoint: Some("http://c:4318/v1/traces".into()),
        ..Default::default()
    };
    let c = otlp(resolve(&endpoint(), &no_env));
    assert_eq!(resource(&c, "service.name"), Some("unknown_service:node"));
    let env = env_of(&[
        ("OTEL_SERVICE_NAME", "from-env"),
        (
            "OTEL_RESOURCE_ATTRIBUTES",
            "service.name=from-attrs,deployment.environment=prod",
        ),
    ]);
    let c = otlp(resolve(&endpoint(), &env));
    assert_eq!(resource(&c, "service.name"), Some("from-env"));
    assert_eq!(resource(&c, "deployment.environment"), Some("prod"));
    let c = otlp(resolve(
        &endpoint(),
        &env_of(&[("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs")]),
    ));
    assert_eq!(resource(&c, "service.name"), Some("from-attrs"));
    let o = ExportOptions {
        service_name: Some("from-option".into()),
        ..endpoint()
    };
    let c = otlp(resolve(&o, &env));
    assert_eq!(resource(&c, "service.name"), Some("from-option"));
    assert_eq!(
        c.resource_attributes
            .iter()
            .filter(|(k, _)| k == "service.name")
            .count(),
        1
    );
}

#[test]
fn resource_has_sdk_attributes_and_user_attributes() {
    let o = ExportOptions {
        endpoint: Some("http://c:4318/v1/traces".into()),
        resource_attributes: Some(vec![
            ("team".into(), "core".into()),
            ("telemetry.sdk.name".into(), "spoofed".into()),
            ("region".into(), "option".into()),
        ]),
        ..Default::default()
    };
    let env = env_of(&[("OTEL_RESOURCE_ATTRIBUTES", "region=env%2D1,host=h")]);
    let c = otlp(resolve(&o, &env));
    assert_eq!(
        resource(&c, "telemetry.sdk.name"),
        Some("adk-native-plugins")
    );
    assert_eq!(resource(&c, "telemetry.sdk.language"), Some("nodejs"));
    assert_eq!(
        resource(&c, "telemetry.sdk.version"),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(resource(&c, "team"), Some("core"));
    assert_eq!(resource(&c, "region"), Some("option"));
    assert_eq!(resource(&c, "host"), Some("h"));
    let names: Vec<&str> = c
        .resource_attributes
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "{names:?}");
}

#[test]
fn batch_defaults_options_and_env() {
    let endpoint = || ExportOptions {
        endpoint: Some("http://c:4318/v1/traces".into()),
        ..Default::default()
    };
    let c = otlp(resolve(&endpoint(), &no_env));
    assert_eq!(
        (
            c.max_queue_size,
            c.max_export_batch_size,
            c.scheduled_delay_millis,
            c.export_timeout_millis
        ),
        (2048, 512, 5000, 30000)
    );
    assert!(c.gzip);
    let env = env_of(&[
        ("OTEL_BSP_MAX_QUEUE_SIZE", "100"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10"),
        ("OTEL_BSP_SCHEDULE_DELAY", "250"),
        ("OTEL_BSP_EXPORT_TIMEOUT", "1000"),
    ]);
    let c = otlp(resolve(&endpoint(), &env));
    assert_eq!(
        (
            c.max_queue_size,
            c.max_export_batch_size,
            c.scheduled_delay_millis,
            c.export_timeout_millis
        ),
        (100, 10, 250, 1000)
    );
    let o = ExportOptions {
        batch: BatchOptions {
            max_queue_size: Some(50),
            max_export_batch_size: Some(5),
            scheduled_delay_millis: Some(0),
            export_timeout_millis: Some(20),
        },
        ..endpoint()
    };
    let c = otlp(resolve(&o, &env));
    assert_eq!(
        (
            c.max_queue_size,
            c.max_export_batch_size,
            c.scheduled_delay_millis,
            c.export_timeout_millis
        ),
        (50, 5, 0, 20)
    );
    // A bad variable: a warning and the default.
    let c = otlp(resolve(
        &endpoint(),
        &env_of(&[
            ("OTEL_BSP_MAX_QUEUE_SIZE", "lots"),
            ("OTEL_BSP_EXPORT_TIMEOUT", "0"),
        ]),
    ));
    assert_eq!((c.max_queue_size, c.export_timeout_millis), (2048, 30000));
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    // A batch bigger than the queue is capped to it.
    let c = otlp(resolve(
        &endpoint(),
        &env_of(&[("OTEL_BSP_MAX_QUEUE_SIZE", "8")]),
    ));
    assert_eq!(c.max_export_batch_size, 8);
}

#[test]
fn invalid_batch_options_are_type_errors() {
    let cases: [(BatchOptions, &str); 4] = [
        (
            BatchOptions {
                max_queue_size: Some(0),
                ..Default::default()
            },
            "maxQueueSize",
        ),
        (
            BatchOptions {
                max_export_batch_size: Some(0),
                ..Default::default()
            },
            "maxExportBatchSize",
        ),
        (
            BatchOptions {
                export_timeout_millis: Some(0),
                ..Default::default()
            },
            "exportTimeoutMillis",
        ),
        (
            BatchOptions {
                max_queue_size: Some(10),
                max_export_batch_size: Some(11),
                ..Default::default()
            },
            "must not exceed",
        ),
    ];
    for (batch, needle) in cases {
        // Checked even when the exporter would not use them.
        for exporter in [None, Some("none".to_string())] {
            let o = ExportOptions {
                exporter: exporter.clone(),
                batch: batch.clone(),
                ..Default::default()
            };
            let m = is_type_error(resolve(&o, &no_env));
            assert!(m.contains(needle), "{m}");
        }
    }
}

#[test]
fn gzip_by_default_unless_the_collector_is_on_this_machine() {
    for (url, gzip) in [
        ("https://trace.wandb.ai/agents/otel/v1/traces", true),
        ("http://collector:4318/v1/traces", true),
        ("http://10.0.0.7:4318/v1/traces", true),
        ("http://[2001:db8::1]:4318/v1/traces", true),
        ("http://localhost.example.com:4318/v1/traces", true),
        ("http://localhost:6006/v1/traces", false),
        ("http://LOCALHOST./v1/traces", false),
        ("http://api.localhost:4318/v1/traces", false),
        ("http://127.0.0.1:4318/v1/traces", false),
        ("http://127.1.2.3:4318/v1/traces", false),
        ("http://[::1]:4318/v1/traces", false),
        ("http://user:pw@127.0.0.1:4318/v1/traces?x=1", false),
    ] {
        assert_eq!(compresses_by_default(url), gzip, "{url}");
        let options = ExportOptions {
            endpoint: Some(url.into()),
            ..Default::default()
        };
        assert_eq!(otlp(resolve(&options, &no_env)).gzip, gzip, "{url}");
        // The environment says otherwise: it wins, either way.
        for (value, want) in [("gzip", true), ("GZIP", true), ("none", false)] {
            let env = env_of(&[("OTEL_EXPORTER_OTLP_COMPRESSION", value)]);
            assert_eq!(otlp(resolve(&options, &env)).gzip, want, "{url} {value}");
        }
        let env = env_of(&[("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd")]);
        let c = otlp(resolve(&options, &env));
        assert_eq!(
            c.gzip, gzip,
            "{url}: an unsupported value keeps the default"
        );
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert!(
            c.warnings[0].contains("'zstd' is not supported"),
            "{:?}",
            c.warnings
        );
    }
}

#[test]
fn transport_settings_from_env() {
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "none"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "1234"),
    ]);
    let c = otlp(resolve(&ExportOptions::default(), &env));
    assert!(!c.gzip);
    assert_eq!(c.request_timeout_millis, 1234);
    // The most the exporter waits for each batch export, retries included
    // (the OpenTelemetry specification), within exportTimeoutMillis.
    assert_eq!(c.export_timeout_millis, 1234);
    assert_eq!(
        c.export_timeout_from_env,
        Some("OTEL_EXPORTER_OTLP_TIMEOUT")
    );
    let longer = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "90000"),
    ]);
    let c = otlp(resolve(&ExportOptions::default(), &longer));
    assert_eq!(c.request_timeout_millis, 90000);
    assert_eq!(c.export_timeout_millis, 30000);
    assert_eq!(c.export_timeout_from_env, None);
    // Unset: exportTimeoutMillis for the batch, 10 s for one attempt.
    let unset = env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]);
    let c = otlp(resolve(&ExportOptions::default(), &unset));
    assert_eq!(
        (c.export_timeout_millis, c.request_timeout_millis),
        (30000, 10000)
    );
}

#[test]
fn the_attribute_value_limit_prefers_the_span_variable_and_warns_on_a_bad_value() {
    const SPAN: &str = "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT";
    const ANY: &str = "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT";
    assert_eq!(attribute_value_limit(&no_env), Ok(None));
    assert_eq!(
        attribute_value_limit(&env_of(&[(ANY, " 100 ")])),
        Ok(Some(100))
    );
    assert_eq!(
        attribute_value_limit(&env_of(&[(ANY, "100"), (SPAN, "7")])),
        Ok(Some(7))
    );
    // Empty is unset, so the general variable applies.
    assert_eq!(
        attribute_value_limit(&env_of(&[(ANY, "100"), (SPAN, " ")])),
        Ok(Some(100))
    );
    assert_eq!(attribute_value_limit(&env_of(&[(ANY, "0")])), Ok(Some(0)));
    for bad in ["-1", "1.5", "ten"] {
        let w = attribute_value_limit(&env_of(&[(ANY, "9"), (SPAN, bad)])).unwrap_err();
        assert!(w.contains(SPAN) && w.contains(bad), "{w}");
        assert!(w.contains("not cut"), "{w}");
    }
}

#[test]
fn debug_output_never_shows_secrets() {
    let o = ExportOptions {
        weave: weave("e/p", Some("sk-very-secret")),
        headers: Some(vec![("x-token".into(), "tok-very-secret".into())]),
        ..Default::default()
    };
    let shown = format!("{o:?}");
    assert!(!shown.contains("very-secret"), "{shown}");
    let c = otlp(resolve(&o, &no_env));
    let shown = format!("{c:?} {:?}", ExporterChoice::Otlp(Box::new(c.clone())));
    assert!(!shown.contains("very-secret"), "{shown}");
    let token = base64::engine::general_purpose::STANDARD.encode("api:sk-very-secret");
    assert!(!shown.contains(&token), "{shown}");
}

#[test]
fn key_value_parsing() {
    let (pairs, bad) = parse_key_values(" a = 1 ,b=x%3Dy%2Cz,,=nokey,noval");
    assert_eq!(
        pairs,
        vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "x=y,z".to_string())
        ]
    );
    assert_eq!(bad, 2);
    assert_eq!(join_path("http://a/", "/v1/traces"), "http://a/v1/traces");
    assert_eq!(
        redact_userinfo("https://u:p@h:1/x"),
        "https://[redacted]@h:1/x"
    );
    assert_eq!(redact_userinfo("https://h/x@y"), "https://h/x@y");
    assert_eq!(
        display_url("https://u:p@h/v1/traces?token=abc#f"),
        "https://[redacted]@h/v1/traces"
    );
}
