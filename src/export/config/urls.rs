//! The endpoint URLs: joined without doubled slashes, checked, shown in
//! messages without credentials, and whether a body to one is gzipped.

use super::{PREFIX, REDACTED};

/// `base` + `/` + `path`, never with a doubled slash.
pub fn join_path(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// An absolute http(s) URL with a host, or a message naming `what`.
pub(super) fn check_url(url: &str, what: &str) -> Result<(), String> {
    let bad = || {
        format!(
            "{PREFIX} {what} '{}' is not an http:// or https:// URL.",
            redact_userinfo(url)
        )
    };
    let uri: ureq::http::Uri = url.parse().map_err(|_| bad())?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http") | Some("https"));
    let host_ok = uri.host().is_some_and(|h| !h.is_empty());
    // A port past 65535 parses here (as no port); WHATWG URL refuses it.
    let port_ok = uri.authority().is_none_or(|a| port_fits(a.as_str()));
    if scheme_ok && host_ok && port_ok {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Whether an authority's port, if it has one, is a port number.
pub(super) fn port_fits(authority: &str) -> bool {
    // After any `user:password@`, whose colon is not a port's.
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host_end = authority.rfind(']').unwrap_or(0);
    match authority[host_end..].rfind(':') {
        Some(i) => {
            let port = &authority[host_end + i + 1..];
            port.is_empty() || port.parse::<u16>().is_ok()
        }
        None => true,
    }
}

/// A URL for messages: no `user:password@`, no query or fragment (either
/// may carry a token).
pub fn display_url(url: &str) -> String {
    let cut = url.find(['?', '#']).unwrap_or(url.len());
    redact_userinfo(&url[..cut])
}

/// A URL with any `user:password@` part replaced, for messages.
pub fn redact_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}://{REDACTED}@{}", &url[..scheme_end], &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Whether bodies are gzipped when the environment does not say: yes,
/// unless the collector is on this machine (`localhost`, 127.0.0.0/8,
/// `::1`). Over loopback gzip saves no bandwidth and only costs CPU, which
/// on a busy machine the application's own threads compete for: in
/// S1-shaped runs on two cores, 4 µs of a 70 µs lifecycle (8 alternating
/// pairs). The OpenTelemetry SDKs never compress unless told.
pub(super) fn compresses_by_default(endpoint: &str) -> bool {
    let Ok(uri) = endpoint.parse::<ureq::http::Uri>() else {
        return true;
    };
    let Some(host) = uri.host() else {
        return true;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    let loopback = name == "localhost"
        || name.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    !loopback
}

/// The values of a URL's query string (`a=1&b=2` gives `1`, `2`), raw and
/// percent-decoded.
pub(super) fn query_values(url: &str) -> Vec<String> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or("");
    let mut values = Vec::new();
    for pair in query.split('&') {
        let value = pair.split_once('=').map_or(pair, |(_, v)| v);
        if value.is_empty() {
            continue;
        }
        values.push(value.to_string());
        let decoded = percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned();
        if decoded != value {
            values.push(decoded);
        }
    }
    values
}
