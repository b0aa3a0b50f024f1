//! Reading back a metrics file retry wrote before, for the counters and the last success it
//! carries over: the Prometheus text exposition format
//! (<https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format>), read
//! strictly. Every line is a comment (`# HELP`, `# TYPE` or other), blank, or a sample
//! `name{label="value",...} value [timestamp]`; anything else makes the whole file unreadable,
//! and retry then replaces it.

use std::collections::BTreeMap;

/// One sample line: the metric name, its labels in order of appearance, and the value.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The metric name (`retry_runs_total`).
    pub name: String,
    /// The labels, by name.
    pub labels: BTreeMap<String, String>,
    /// The value (`+Inf`, `-Inf` and `NaN` included).
    pub value: f64,
}

/// The samples of `text`, in order.
///
/// # Errors
/// The first line that is not a comment, blank, or a well-formed sample, as
/// `line N: what is wrong`.
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let mut samples = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        samples.push(sample(line).map_err(|why| format!("line {}: {why}", n + 1))?);
    }
    Ok(samples)
}

/// One sample line.
fn sample(line: &str) -> Result<Sample, String> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("no metric name".into());
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = read_labels(after, &mut labels)?;
    }
    let mut fields = rest.split_ascii_whitespace();
    let value = fields.next().ok_or("no value")?;
    let value = parse_value(value).ok_or_else(|| format!("bad value '{value}'"))?;
    if let Some(timestamp) = fields.next()
        && timestamp.parse::<i64>().is_err()
    {
        return Err(format!("bad timestamp '{timestamp}'"));
    }
    if fields.next().is_some() || !rest.starts_with([' ', '\t']) {
        return Err("unexpected text around the value".into());
    }
    Ok(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// Reads `name="value",...}` into `labels`; returns what follows the `}`.
fn read_labels<'a>(
    mut text: &'a str,
    labels: &mut BTreeMap<String, String>,
) -> Result<&'a str, String> {
    loop {
        text = text.trim_start();
        if let Some(after) = text.strip_prefix('}') {
            return Ok(after);
        }
        let eq = text.find('=').ok_or("a label without '='")?;
        let name = text[..eq].trim();
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!("bad label name '{name}'"));
        }
        let after_eq = text[eq + 1..].trim_start();
        let quoted = after_eq
            .strip_prefix('"')
            .ok_or("a label value without quotes")?;
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("an unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    _ => return Err("a bad escape in a label value".into()),
                },
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label '{name}' given twice"));
        }
        text = quoted[end + 1..].trim_start();
        text = text.strip_prefix(',').unwrap_or(text);
    }
}

/// A sample value: a Go-style float, or `+Inf`, `-Inf`, `NaN`.
fn parse_value(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        // Rust also reads "inf" and "nan" in any case; the format does not.
        _ if text
            .bytes()
            .any(|b| b.is_ascii_alphabetic() && !matches!(b, b'e' | b'E')) =>
        {
            None
        }
        _ => text.parse().ok(),
    }
}

/// Escapes a label value for the text format: backslash, double quote and line feed.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_with_and_without_labels_comments_and_timestamps() {
        let text = "# HELP a_total Things.\n# TYPE a_total counter\n\
                    a_total{job=\"x\",result=\"success\"} 3\n\nb 1.5e3 1700000000000\n\
                    c{ job = \"q\\\"u\\\\o\\nte\" , } +Inf\n";
        let samples = parse(text).unwrap();
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[0].name, "a_total");
        assert_eq!(samples[0].labels["result"], "success");
        assert_eq!(samples[0].value, 3.0);
        assert_eq!(samples[1].value, 1500.0);
        assert!(samples[1].labels.is_empty());
        assert_eq!(samples[2].labels["job"], "q\"u\\o\nte");
        assert!(samples[2].value.is_infinite());
    }

    #[test]
    fn what_is_not_the_format_is_refused_with_its_line() {
        for (bad, line) in [
            ("a{job=\"x\"\n", 1),
            ("ok 1\na{job=x} 1\n", 2),
            ("a 1 2 3\n", 1),
            ("a one\n", 1),
            ("a inf\n", 1),
            ("1a 1\n", 1),
            ("a{job=\"x\",job=\"y\"} 1\n", 1),
            ("a{job=\"\\t\"} 1\n", 1),
            ("a{} 1 nottime\n", 1),
            ("a{}1\n", 1),
            ("\u{feff}a 1\n", 1),
            ("{job=\"x\"} 1\n", 1),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.starts_with(&format!("line {line}:")), "{bad:?}: {err}");
        }
    }

    #[test]
    fn escaped_label_values_read_back_as_they_were() {
        let odd = "a\\b\"c\nd é\u{1}";
        let text = format!("m{{job=\"{}\"}} 1\n", escape_label(odd));
        assert_eq!(parse(&text).unwrap()[0].labels["job"], odd);
    }
}
