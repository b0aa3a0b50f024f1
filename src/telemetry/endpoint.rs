//! An OTLP endpoint variable's URL ([`super::otlp`]): `http` only, the traces path added to the
//! general endpoint, and credentials in it neither sent nor ever shown.

/// The path OTLP/HTTP appends to `OTEL_EXPORTER_OTLP_ENDPOINT` for traces.
pub const TRACES_PATH: &str = "v1/traces";

/// The URL from an endpoint variable: `http` only (retry has no TLS), with a host; with
/// `append` (the general endpoint), `v1/traces` added to its path; and whether it held a user
/// name or password.
///
/// Credentials in the URL (`http://user:password@host`) are neither sent nor ever printed: the
/// URL returned has its userinfo dropped entirely (so every line naming the endpoint, such as
/// a failed export's, shows none), and a value echoed in a warning has it replaced by `***`
/// (`hide_userinfo`). The user name is hidden with the password, for it is often a token.
/// Credentials go in `OTEL_EXPORTER_OTLP_HEADERS` (`Authorization=Basic ...`).
///
/// # Errors
/// The warning line, naming `name` and the value (its userinfo hidden), when the URL cannot be
/// used.
pub fn endpoint_url(name: &str, value: &str, append: bool) -> Result<(url::Url, bool), String> {
    let bad = |why: &str| {
        format!(
            "{name} is '{}': {why}; traces are not exported",
            hide_userinfo(value)
        )
    };
    let mut url = url::Url::parse(value.trim()).map_err(|e| bad(&e.to_string()))?;
    match url.scheme() {
        "http" => {}
        "https" => return Err(bad("retry sends OTLP over plain http only (no TLS)")),
        _ => return Err(bad("not an http:// URL")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    let had_credentials = !url.username().is_empty() || url.password().is_some();
    // Cannot fail on an http URL with a host (the `url` crate refuses only URLs without one).
    let _ = url.set_username("");
    let _ = url.set_password(None);
    if append {
        let path = url.path().trim_end_matches('/').to_string();
        url.set_path(&format!("{path}/{TRACES_PATH}"));
    }
    Ok((url, had_credentials))
}

/// `text` (an endpoint variable's value, a URL or not) with what may be a user name and
/// password replaced by `***`: everything from the start of the authority (after `://`, or
/// the start of a text without it) to the last `@`. Errs towards hiding more, since the text
/// may be no valid URL (`http://u:pa/ss@host`).
fn hide_userinfo(text: &str) -> String {
    let start = text.find("://").map_or(0, |i| i + 3);
    match text.rfind('@') {
        Some(at) if at >= start => format!("{}***{}", &text[..start], &text[at..]),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_hidden_url_or_not() {
        assert_eq!(hide_userinfo("http://h/a"), "http://h/a");
        assert_eq!(hide_userinfo("http://@h"), "http://***@h");
        assert_eq!(hide_userinfo("http://u:pa/ss@h"), "http://***@h");
        assert_eq!(hide_userinfo("u:p@h:1"), "***@h:1");
    }

    #[test]
    fn credentials_are_dropped_and_said() {
        let (url, had) = endpoint_url("E", "http://u:p@h:4318/", true).unwrap();
        assert_eq!((url.as_str(), had), ("http://h:4318/v1/traces", true));
        let (url, had) = endpoint_url("E", "http://h:4318/x", false).unwrap();
        assert_eq!((url.as_str(), had), ("http://h:4318/x", false));
    }
}
