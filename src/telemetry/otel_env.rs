//! The OTLP exporter's settings ([`super::otlp::Exporter`]), read from the `OTEL_*` variables
//! of the OpenTelemetry specification ("OTLP Exporter Configuration",
//! <https://opentelemetry.io/docs/specs/otel/protocol/exporter/>, and "Environment Variable
//! Specification", <https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/>).
//!
//! As the specification asks of an SDK, a variable that cannot be used is a warning, never a
//! failure of the run: its default is used, or traces are not exported.

use std::time::Duration;

use super::endpoint::endpoint_url;
use super::http;
use super::otlp::{DEFAULT_TIMEOUT, Exporter, Protocol};

/// What the `OTEL_*` variables say: the exporter (`None`: no traces), and a warning for each
/// variable that could not be used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FromEnv {
    /// The exporter, when traces are to be exported.
    pub exporter: Option<Exporter>,
    /// One line each: the variable, its value, and what retry does instead.
    pub warnings: Vec<String>,
}

/// Reads the exporter settings through `var` (empty counts as unset). Traces are exported
/// only when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set,
/// `OTEL_SDK_DISABLED` is not `true` and `OTEL_TRACES_EXPORTER` is unset or `otlp`. The
/// signal-specific variable (`..._TRACES_...`) wins over the general one, as the
/// specification says.
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> FromEnv {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let traces_endpoint = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let endpoint = var("OTEL_EXPORTER_OTLP_ENDPOINT");
    if traces_endpoint.is_none() && endpoint.is_none() {
        return FromEnv::default();
    }
    configure(&var, traces_endpoint, endpoint)
}

/// [`from_env`] once an endpoint is set.
#[cold]
#[inline(never)]
fn configure(
    var: &dyn Fn(&str) -> Option<String>,
    traces_endpoint: Option<String>,
    endpoint: Option<String>,
) -> FromEnv {
    let mut out = FromEnv::default();
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return out;
    }
    if let Some(exporters) = var("OTEL_TRACES_EXPORTER") {
        let names: Vec<&str> = exporters.split(',').map(str::trim).collect();
        if names.contains(&"none") {
            return out;
        }
        if names.iter().any(|n| *n != "otlp") {
            out.warnings.push(format!(
                "OTEL_TRACES_EXPORTER is '{exporters}': retry exports only 'otlp'; traces are \
                 not exported"
            ));
            return out;
        }
    }
    let specific = |name: &str| {
        var(&format!("OTEL_EXPORTER_OTLP_TRACES_{name}"))
            .map(|v| (format!("OTEL_EXPORTER_OTLP_TRACES_{name}"), v))
    };
    let either = |name: &str| {
        specific(name).or_else(|| {
            var(&format!("OTEL_EXPORTER_OTLP_{name}"))
                .map(|v| (format!("OTEL_EXPORTER_OTLP_{name}"), v))
        })
    };
    let url = match (&traces_endpoint, &endpoint) {
        (Some(full), _) => endpoint_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", full, false),
        (None, Some(base)) => endpoint_url("OTEL_EXPORTER_OTLP_ENDPOINT", base, true),
        (None, None) => unreachable!("checked above"),
    };
    let url = match url {
        Ok((url, had_credentials)) => {
            if had_credentials {
                let name = traces_endpoint.as_ref().map_or(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    |_| "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                );
                out.warnings.push(format!(
                    "{name}: the user name and password in the URL are not sent (nor shown); \
                     to authenticate, set OTEL_EXPORTER_OTLP_HEADERS, as \
                     'Authorization=Basic <base64 of user:password>'"
                ));
            }
            url
        }
        Err(warning) => {
            out.warnings.push(warning);
            return out;
        }
    };
    let protocol = match either("PROTOCOL") {
        None => Protocol::Protobuf,
        Some((_, v)) if v.trim() == "http/protobuf" => Protocol::Protobuf,
        Some((_, v)) if v.trim() == "http/json" => Protocol::Json,
        Some((name, v)) => {
            out.warnings.push(format!(
                "{name} is '{v}': retry speaks http/protobuf and http/json; traces are not \
                 exported"
            ));
            return out;
        }
    };
    let timeout = match either("TIMEOUT") {
        None => DEFAULT_TIMEOUT,
        Some((name, v)) => match v.trim().parse::<u64>() {
            Ok(ms) => Duration::from_millis(ms),
            Err(_) => {
                out.warnings.push(format!(
                    "{name} is '{v}', not a number of milliseconds: the default, {}ms, is used",
                    DEFAULT_TIMEOUT.as_millis()
                ));
                DEFAULT_TIMEOUT
            }
        },
    };
    let headers = match either("HEADERS") {
        None => Vec::new(),
        Some((name, v)) => match key_values(&v, true) {
            Ok(mut pairs) => {
                // Those retry writes itself, or that would change the request's framing or
                // the connection: a second Content-Length makes a malformed request.
                pairs.retain(|(key, _)| {
                    let own = http::is_own_header(key);
                    if own {
                        out.warnings.push(format!(
                            "{name}: '{key}' is a header retry sets itself or one that \
                             controls the connection; it is not sent"
                        ));
                    }
                    !own
                });
                pairs
            }
            Err(why) => {
                out.warnings
                    .push(format!("{name}: {why}; no header from it is sent"));
                Vec::new()
            }
        },
    };
    let mut resource = match var("OTEL_RESOURCE_ATTRIBUTES") {
        None => Vec::new(),
        Some(v) => match key_values(&v, false) {
            Ok(pairs) => pairs,
            Err(why) => {
                out.warnings
                    .push(format!("OTEL_RESOURCE_ATTRIBUTES: {why}; it is ignored"));
                Vec::new()
            }
        },
    };
    // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES; without either,
    // the specification's default names the executable.
    let service = var("OTEL_SERVICE_NAME")
        .or_else(|| {
            resource
                .iter()
                .find(|(k, _)| k == "service.name")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_else(|| "unknown_service:retry".to_string());
    resource.retain(|(k, _)| k != "service.name");
    resource.insert(0, ("service.name".to_string(), service));
    out.exporter = Some(Exporter {
        url,
        protocol,
        headers,
        timeout,
        resource,
    });
    out
}

/// `key1=value1,key2=value2` as the W3C Baggage format writes it (the format of
/// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_RESOURCE_ATTRIBUTES`): values percent-decoded, space
/// around the parts ignored. With `header`, a key or value that cannot be an HTTP header
/// field (a control character, a colon in the key) is refused.
fn key_values(text: &str, header: bool) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not key=value"))?;
        let key = key.trim();
        let value = percent_decode(value.trim())
            .ok_or_else(|| format!("the value of '{key}' is not percent-encoded UTF-8"))?;
        if key.is_empty() {
            return Err(format!("'{part}' has no key"));
        }
        let token = |c: char| c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c);
        if header && (!key.chars().all(token) || value.chars().any(|c| c.is_control())) {
            return Err(format!("'{key}' cannot be sent as an HTTP header"));
        }
        pairs.push((key.to_string(), value));
    }
    Ok(pairs)
}

/// `%XX` sequences decoded; `None` for a bad sequence or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(vars: &[(&str, &str)]) -> FromEnv {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_env(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_without_an_endpoint_or_when_disabled() {
        assert_eq!(read(&[]), FromEnv::default());
        assert_eq!(read(&[("OTEL_SERVICE_NAME", "x")]), FromEnv::default());
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert!(read(&[on]).exporter.is_some());
        assert_eq!(
            read(&[on, ("OTEL_SDK_DISABLED", "TRUE")]),
            FromEnv::default()
        );
        assert_eq!(
            read(&[on, ("OTEL_TRACES_EXPORTER", "none")]),
            FromEnv::default()
        );
        assert!(
            read(&[on, ("OTEL_TRACES_EXPORTER", "otlp")])
                .exporter
                .is_some()
        );
        let zipkin = read(&[on, ("OTEL_TRACES_EXPORTER", "zipkin")]);
        assert!(zipkin.exporter.is_none());
        assert!(zipkin.warnings[0].contains("OTEL_TRACES_EXPORTER is 'zipkin'"));
    }

    #[test]
    fn the_general_endpoint_gets_the_traces_path_and_the_specific_one_is_used_as_is() {
        let general = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318/base/")]);
        assert_eq!(
            general.exporter.unwrap().url.as_str(),
            "http://h:4318/base/v1/traces"
        );
        let both = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom"),
        ]);
        assert_eq!(both.exporter.unwrap().url.as_str(), "http://t:1/custom");
    }

    #[test]
    fn protocol_timeout_headers_and_resource() {
        let got = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b%2Cc, x=1"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=old,deployment.environment=ci",
            ),
            ("OTEL_SERVICE_NAME", "nightly"),
        ]);
        assert!(got.warnings.is_empty(), "{:?}", got.warnings);
        let exporter = got.exporter.unwrap();
        assert_eq!(exporter.protocol, Protocol::Json);
        assert_eq!(exporter.timeout, Duration::from_millis(2500));
        assert_eq!(
            exporter.headers,
            [("api-key".into(), "a b,c".into()), ("x".into(), "1".into())]
        );
        assert_eq!(
            exporter.resource,
            [
                ("service.name".into(), "nightly".into()),
                ("deployment.environment".into(), "ci".into())
            ]
        );
        let default = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h")])
            .exporter
            .unwrap();
        assert_eq!(default.resource[0].1, "unknown_service:retry");
        assert_eq!(default.timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn credentials_in_the_endpoint_are_dropped_one_warning_and_never_shown() {
        for (name, value, url) in [
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://user:s3cret@h:4318",
                "http://h:4318/v1/traces",
            ),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://t0ken@h:4318/x",
                "http://h:4318/x",
            ),
        ] {
            let got = read(&[(name, value)]);
            assert_eq!(got.exporter.unwrap().url.as_str(), url);
            assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
            let warning = &got.warnings[0];
            assert!(warning.starts_with(&format!("{name}: ")), "{warning}");
            assert!(warning.contains("OTEL_EXPORTER_OTLP_HEADERS"), "{warning}");
            assert!(!warning.contains("s3cret") && !warning.contains("t0ken"));
        }
        // A value refused is echoed with its userinfo hidden, URL or not.
        for (value, shown) in [
            ("https://user:s3cret@h:4318", "https://***@h:4318"),
            ("http://user:s3/cret@h:4318", "http://***@h:4318"),
            ("user:s3cret@h:4318", "***@h:4318"),
            ("h:4318", "h:4318"),
        ] {
            let got = read(&[("OTEL_EXPORTER_OTLP_ENDPOINT", value)]);
            assert!(got.exporter.is_none(), "{value}");
            assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
            assert!(
                got.warnings[0].starts_with(&format!("OTEL_EXPORTER_OTLP_ENDPOINT is '{shown}': ")),
                "{:?}",
                got.warnings
            );
        }
    }

    #[test]
    fn headers_retry_sets_itself_are_one_warning_each_and_the_others_are_kept() {
        let got = read(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                "Host=evil.example,a=1,content-length=0,Transfer-Encoding=chunked,b=2,\
                 CONNECTION=keep-alive,Content-Type=text/plain",
            ),
        ]);
        assert_eq!(
            got.exporter.unwrap().headers,
            [("a".into(), "1".into()), ("b".into(), "2".into())]
        );
        let named: Vec<&str> = got
            .warnings
            .iter()
            .map(|w| {
                assert!(w.starts_with("OTEL_EXPORTER_OTLP_TRACES_HEADERS: '"), "{w}");
                assert!(w.ends_with("; it is not sent"), "{w}");
                w.split('\'').nth(1).unwrap()
            })
            .collect();
        assert_eq!(
            named,
            [
                "Host",
                "content-length",
                "Transfer-Encoding",
                "CONNECTION",
                "Content-Type"
            ]
        );
    }

    #[test]
    fn unusable_values_are_warnings_not_failures() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://h:4318");
        for (vars, says, exports) in [
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "https://h:4318")],
                "no TLS",
                false,
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "h:4318")],
                "not an http",
                false,
            ),
            (
                vec![("OTEL_EXPORTER_OTLP_ENDPOINT", "::")],
                "OTEL_EXPORTER_OTLP_ENDPOINT is '::'",
                false,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
                "is 'grpc'",
                false,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_TIMEOUT", "1s")],
                "is '1s'",
                true,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_TIMEOUT", "99999999999999999999")],
                "milliseconds",
                true,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_HEADERS", "a=%0d%0aInjected: 1")],
                "HTTP header",
                true,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_HEADERS", "noequals")],
                "not key=value",
                true,
            ),
            (
                vec![on, ("OTEL_EXPORTER_OTLP_HEADERS", "a=%zz")],
                "percent-encoded",
                true,
            ),
            (vec![on, ("OTEL_RESOURCE_ATTRIBUTES", "=x")], "no key", true),
        ] {
            let got = read(&vars);
            assert_eq!(got.warnings.len(), 1, "{vars:?}: {:?}", got.warnings);
            assert!(
                got.warnings[0].contains(says),
                "{vars:?}: {:?}",
                got.warnings
            );
            assert_eq!(got.exporter.is_some(), exports, "{vars:?}");
        }
    }
}
