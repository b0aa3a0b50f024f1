//! Where budget state lives (`--budget-store`, `RETRY_BUDGET_STORE`): a directory, or a Redis
//! (or Valkey) server named by URL; the default directory; and redaction of passwords, so no
//! message or display ever shows one.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// The port of a Redis URL without one.
pub const DEFAULT_REDIS_PORT: u16 = 6379;

/// A parsed `--budget-store` value.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A directory of files, one per KEY.
    Dir(PathBuf),
    /// A Redis or Valkey server.
    Redis(RedisUrl),
}

/// A validated `redis://[user:password@]host[:port][/db]` (or `valkey://`) URL. Its
/// [`fmt::Display`] and [`fmt::Debug`] show the password as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl {
    url: String,
}

impl RedisUrl {
    /// The full URL, password included: for connecting only, never for printing.
    pub fn secret_url(&self) -> &str {
        &self.url
    }
}

impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.url))
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisUrl({self})")
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Dir(path) => write!(f, "{}", path.display()),
            StoreLocation::Redis(url) => write!(f, "{url}"),
        }
    }
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Dir(path) => write!(f, "Dir({path:?})"),
            StoreLocation::Redis(url) => write!(f, "Redis({url})"),
        }
    }
}

/// Replaces the password of a URL-like text with `***`. Works on text that is not a valid URL
/// too, erring towards hiding more: everything between the first `:` after `scheme://` and
/// the last `@` is hidden; in a text without `://` (a URL with a slash missing, say),
/// everything between the first `:` and the last `@`.
pub fn redact(text: &str) -> String {
    let Some(scheme_end) = text.find("://") else {
        return match (text.find(':'), text.rfind('@')) {
            (Some(colon), Some(at)) if colon < at => {
                format!("{}***{}", &text[..=colon], &text[at..])
            }
            _ => text.to_string(),
        };
    };
    let rest_start = scheme_end + 3;
    let rest = &text[rest_start..];
    let Some(at) = rest.rfind('@') else {
        return text.to_string();
    };
    let userinfo = &rest[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &text[..rest_start],
            &userinfo[..colon],
            &rest[at..]
        ),
        None => text.to_string(),
    }
}

/// Whether `text` (no `://` in it) looks like a URL rather than a directory: it does not start
/// with `/` or `.`, and either starts with a scheme and a colon (RFC 3986's `ALPHA *( ALPHA /
/// DIGIT / "+" / "-" / "." ) ":"`, <https://www.rfc-editor.org/rfc/rfc3986#section-3.1>), as
/// `redis:/host` or `redis:host` do, or has a user and password (`:` then `@`), as
/// `redis//u:pw@host` does. Such a value is a mistyped URL far more often than a directory, and
/// taking it for a directory would turn a fleet's budget into a local one without a word.
fn looks_like_url(text: &str) -> bool {
    if text.starts_with('/') || text.starts_with('.') {
        return false;
    }
    let scheme = text.split(':').next().unwrap_or_default();
    let has_scheme = text.contains(':')
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let has_userinfo = matches!((text.find(':'), text.rfind('@')), (Some(c), Some(a)) if c < a);
    has_scheme || has_userinfo
}

/// Parses a `--budget-store` value: `redis://...` or `valkey://...` is a server, any other
/// text a directory (created when first used), unless it looks like a URL
/// (see `looks_like_url`): a directory whose name does, such as `cache:v2`, is written
/// `./cache:v2`.
///
/// # Errors
/// A one-line message naming `flag` and the value (password redacted): an empty value, an
/// unsupported scheme (`rediss://` TLS, `unix://`, anything else), a value that looks like a
/// URL without being one (`redis:/host`), or a Redis URL with no host, a bad port, a database
/// that is not a number, a query or a fragment.
pub fn parse_store_location(flag: &str, value: &OsStr) -> Result<StoreLocation, String> {
    let Some(text) = value.to_str() else {
        if value.as_encoded_bytes().windows(3).any(|w| w == b"://") {
            return Err(format!("{flag}: a Redis URL must be UTF-8"));
        }
        return Ok(StoreLocation::Dir(PathBuf::from(value)));
    };
    let shown = redact(text);
    let bad = |why: &str| format!("{flag}: {why} in '{shown}'");
    if text.is_empty() {
        return Err(format!(
            "{flag}: empty value (expected a directory or a redis:// URL)"
        ));
    }
    let Some(scheme_end) = text.find("://") else {
        if looks_like_url(text) {
            return Err(format!(
                "{flag}: '{shown}' looks like a URL but is not one: expected \
                 redis://[user:password@]host[:port][/db] or valkey://... (write a directory \
                 whose name has a ':' as ./NAME)"
            ));
        }
        return Ok(StoreLocation::Dir(PathBuf::from(text)));
    };
    let scheme = text[..scheme_end].to_ascii_lowercase();
    match scheme.as_str() {
        "redis" | "valkey" => {}
        "rediss" | "valkeys" => {
            return Err(bad(
                "TLS is not supported (use redis:// through a TLS tunnel)",
            ));
        }
        _ => {
            return Err(bad(&format!(
                "unsupported scheme '{}' (expected redis:// or valkey://, or a directory)",
                &text[..scheme_end]
            )));
        }
    }
    let url = url::Url::parse(text).map_err(|e| bad(&format!("invalid URL ({e})")))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("unexpected '?' or '#' part"));
    }
    let db = url.path().trim_start_matches('/');
    if !db.is_empty() && db.parse::<u32>().is_err() {
        return Err(bad(&format!("database '{db}' is not a number")));
    }
    Ok(StoreLocation::Redis(RedisUrl {
        url: text.to_string(),
    }))
}

/// The default directory: `$XDG_RUNTIME_DIR/retry` when that variable is an absolute path
/// (the XDG Base Directory Specification's per-user runtime directory,
/// <https://specifications.freedesktop.org/basedir-spec/latest/>), else `retry-UID` in the
/// temporary directory (`$TMPDIR`, else `/tmp`).
#[cfg(unix)]
pub fn default_dir() -> PathBuf {
    let uid = nix::unistd::geteuid().as_raw();
    default_dir_from(
        std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
        &std::env::temp_dir(),
        uid,
    )
}

/// The default directory on Windows: `retry` in the user's temporary directory (`%TEMP%`,
/// per user by its default ACL).
#[cfg(windows)]
pub fn default_dir() -> PathBuf {
    std::env::temp_dir().join("retry")
}

/// [`default_dir`] from explicit inputs.
pub fn default_dir_from(xdg_runtime_dir: Option<&OsStr>, temp: &Path, uid: u32) -> PathBuf {
    match xdg_runtime_dir.map(Path::new) {
        Some(dir) if dir.is_absolute() => dir.join("retry"),
        _ => temp.join(format!("retry-{uid}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &str) -> Result<StoreLocation, String> {
        parse_store_location("--budget-store", OsStr::new(v))
    }

    #[test]
    fn directories_and_urls() {
        assert_eq!(
            parse("/run/x").unwrap(),
            StoreLocation::Dir("/run/x".into())
        );
        assert_eq!(
            parse("rel/dir").unwrap(),
            StoreLocation::Dir("rel/dir".into())
        );
        let StoreLocation::Redis(url) = parse("redis://u:s3cret@h:6380/2").unwrap() else {
            panic!("not redis");
        };
        assert_eq!(url.to_string(), "redis://u:***@h:6380/2");
        assert_eq!(format!("{url:?}"), "RedisUrl(redis://u:***@h:6380/2)");
        assert_eq!(url.secret_url(), "redis://u:s3cret@h:6380/2");
        assert!(parse("valkey://localhost").is_ok());
        assert!(parse("redis://:pw@[::1]:7000/0").is_ok());
        for dir in [
            "./cache:v2",
            "/var/lib/a:b@c",
            "plain",
            "a b",
            "dir/sub",
            "ünï",
        ] {
            assert_eq!(parse(dir).unwrap(), StoreLocation::Dir(dir.into()), "{dir}");
        }
    }

    #[test]
    fn a_mistyped_url_is_refused_not_taken_for_a_directory() {
        for (value, shown) in [
            ("redis:/u:PW@host", "'redis:***@host'"),
            ("redis:u:PW@host:6379", "'redis:***@host:6379'"),
            ("redis:host", "'redis:host'"),
            ("REDIS:/host", "'REDIS:/host'"),
            ("valkey:/:PW@h/2", "'valkey:***@h/2'"),
            ("redis//u:PW@host", "'redis//u:***@host'"),
            ("u:PW@host", "'u:***@host'"),
            ("cache:v2", "'cache:v2'"),
        ] {
            let e = parse(value).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "--budget-store: {shown} looks like a URL but is not one"
                )),
                "{value}: {e}"
            );
            assert!(!e.contains("PW"), "{e}");
        }
    }

    #[test]
    fn errors_name_the_flag_and_hide_the_password() {
        for (value, why) in [
            ("", "empty"),
            ("rediss://u:pw@h", "TLS"),
            ("http://u:pw@h", "unsupported scheme"),
            ("redis://u:pw@h:99999", "invalid URL"),
            ("redis://u:pw@h/x", "not a number"),
            ("redis://u:pw@h/0?db=1", "'?'"),
            ("redis://u:pw@", "URL"),
            ("redis://u:p/w@h", "invalid URL"),
        ] {
            let e = parse(value).unwrap_err();
            assert!(e.starts_with("--budget-store: "), "{e}");
            assert!(e.contains(why), "{value}: {e}");
            assert!(!e.contains("pw") && !e.contains("p/w"), "{e}");
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("redis://h:1"), "redis://h:1");
        assert_eq!(redact("redis://user@h"), "redis://user@h");
        assert_eq!(redact("redis://:pw@h"), "redis://:***@h");
        assert_eq!(redact("redis://u:a@b@h/0"), "redis://u:***@h/0");
        assert_eq!(redact("/tmp/dir"), "/tmp/dir");
        assert_eq!(redact("redis:/u:pw@h"), "redis:***@h");
        assert_eq!(redact("a:b"), "a:b");
    }

    #[test]
    fn default_directory() {
        let tmp = Path::new("/tmp");
        assert_eq!(
            default_dir_from(Some(OsStr::new("/run/user/7")), tmp, 7),
            PathBuf::from("/run/user/7/retry")
        );
        assert_eq!(
            default_dir_from(Some(OsStr::new("relative")), tmp, 7),
            PathBuf::from("/tmp/retry-7")
        );
        assert_eq!(
            default_dir_from(None, tmp, 7),
            PathBuf::from("/tmp/retry-7")
        );
    }
}
