//! Unit tests of the header-block reader on what clients print around their blocks: the block
//! `curl -f` cuts and its `curl: (22)` line, and `wget -S`'s indented blocks.

use super::*;

/// `text` read in pieces of 1, 2, 7 and 4096 bytes: its status (the same in each) and hint.
fn read_all(text: impl AsRef<[u8]>) -> (Option<u16>, Option<f64>) {
    let text = text.as_ref();
    let whole = status(text, 4096);
    for size in [1, 2, 7] {
        let shown = String::from_utf8_lossy(text);
        assert_eq!(status(text, size), whole, "{shown:?} in {size}");
    }
    let hint = in_pieces(text, 4096).map(|h| h.wait_from(now()).as_secs_f64());
    (whole, hint)
}

/// curl -fsS -v -o /dev/null of a 404 (curl 7.88.1): `-f` stops before the block's `<`.
const CURL_FV_404: &str = "* Connected to 127.0.0.1 (127.0.0.1) port 80 (#0)\n\
    > GET /gone HTTP/1.1\r\n> Host: 127.0.0.1\r\n> \r\n< HTTP/1.1 404 Not Found\r\n\
    < Content-Length: 14\r\n* The requested URL returned error: 404\n\
    * Closing connection 0\ncurl: (22) The requested URL returned error: 404\n";

#[test]
fn a_block_curl_f_cut_ends_at_its_error_line_with_its_status() {
    assert_eq!(read_all(CURL_FV_404), (Some(404), None));
    // -fsv: the `* ` note alone; a 503 with its Retry-After; after a redirect; HTTP/2.
    let note_only = CURL_FV_404.replace("curl: (22) The requested URL returned error: 404\n", "");
    assert_eq!(read_all(&note_only), (Some(404), None));
    let busy = CURL_FV_404
        .replace(
            "404 Not Found\r\n",
            "503 Service Unavailable\r\n< Retry-After: 2\r\n",
        )
        .replace("error: 404", "error: 503");
    assert_eq!(read_all(&busy), (Some(503), Some(2.0)));
    let moved = format!("< HTTP/1.1 301 Moved\r\n< Location: /gone\r\n< \r\n{CURL_FV_404}");
    assert_eq!(read_all(&moved), (Some(404), None));
    let http2 = "< HTTP/2 429 \r\n< retry-after: 3\r\n\
                 * The requested URL returned error: 429\ncurl: (22) The requested URL returned error: 429\n";
    assert_eq!(read_all(http2), (Some(429), Some(3.0)));
    // The line of older curl, with the rest of the status line; a plain block cut the same.
    let old = "HTTP/1.1 404 Not Found\r\nServer: x\r\n\
               curl: (22) The requested URL returned error: 404 Not Found\r\n";
    assert_eq!(read_all(old), (Some(404), None));
    // Another transfer follows on the same stream: the block it cut still counts.
    let next = format!("{CURL_FV_404}< HTTP/1.1 200 OK\r\n< \r\n");
    assert_eq!(read_all(&next), (Some(200), None));
    let next = format!("{CURL_FV_404}* Trying 127.0.0.1:80...\n");
    assert_eq!(read_all(&next), (Some(404), None));
}

#[test]
fn curl_s_error_line_says_nothing_of_a_block_with_another_code() {
    // Not that transfer's status: the cut block stays cut (retried as before).
    let other = CURL_FV_404.replace("error: 404", "error: 503");
    assert_eq!(read_all(&other), (None, None));
    // A note is curl -v's only: in a plain block it is no such line.
    assert_eq!(
        read_all("HTTP/1.1 404\r\n* The requested URL returned error: 404\n"),
        (None, None)
    );
    // Weird codes: none that curl's -f stops at, or that a status class holds.
    for code in [
        "4040", "40", "404x", "600", "999", "399", "200", "000", "-404", " 404", "+404", "",
    ] {
        let text = format!(
            "< HTTP/1.1 404 Not Found\r\ncurl: (22) The requested URL returned error: {code}\n"
        );
        assert_eq!(read_all(&text), (None, None), "{code:?}");
        let text = format!("curl: (22) The requested URL returned error: {code}\n");
        assert_eq!(read_all(&text), (None, None), "{code:?}");
    }
}

#[test]
fn curl_s_error_line_alone_counts_as_the_stream_s_last_line() {
    let line = "curl: (22) The requested URL returned error: 404\n";
    // `curl -fsS URL`, or its headers on the other stream: the last line says it.
    assert_eq!(read_all(line), (Some(404), None));
    assert_eq!(
        read_all(format!("  % Total\r  0  14\n{line}")),
        (Some(404), None)
    );
    let old = b"curl: (22) The requested URL returned error: 503 Service \xff Unavailable\r\n";
    assert_eq!(read_all(old), (Some(503), None));
    // Anything after it (another command's words, a partial line, an empty line), no line
    // end, a line of another exit status or tool: it is not curl's last word.
    for text in [
        format!("{line}done\n"),
        format!("{line}x"),
        format!("{line}\n"),
        line.trim_end().to_string(),
        line.replace("(22)", "(56)"),
        line.replace("curl:", "wget:"),
        format!(" {line}"),
        format!("x{line}"),
        line.replace("404", "404\u{1b}"),
    ] {
        assert_eq!(read_all(&text), (None, None), "{text:?}");
    }
    // Two such lines: the last.
    let twice = format!("{}{line}", line.replace("404", "503"));
    assert_eq!(read_all(&twice), (Some(404), None));
}

#[test]
fn curl_s_error_line_after_a_block_that_ended_or_in_a_body_says_nothing() {
    let line = "curl: (22) The requested URL returned error: 404\n";
    for text in [
        // A block that ended is that transfer's (`-D /dev/stderr`: the same code anyway).
        format!("HTTP/1.1 503 Busy\r\n\r\n{line}"),
        format!("< HTTP/1.1 503 Busy\r\n< \r\n{line}"),
        // The last line of a body of unknown length (`--fail-with-body -i` of a 503).
        format!("HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\nsaw:\n{line}"),
        // In a body of known length, in the middle and at its end.
        format!(
            "HTTP/1.1 503 Busy\r\nContent-Length: {}\r\n\r\n{line}more\n",
            line.len() + 5
        ),
        format!(
            "HTTP/1.1 503 Busy\r\nContent-Length: {}\r\n\r\n{line}",
            line.len()
        ),
    ] {
        assert_eq!(read_all(&text), (Some(503), None), "{text:?}");
    }
    // Longer than any line kept: not read.
    let long = format!("{}{}\n", line.trim_end(), " x".repeat(MAX_HEADER_LINE));
    assert_eq!(read_all(&long), (None, None));
}

/// `wget -S -O /dev/null` of a 301 to a 503 with `Retry-After: 2` (GNU Wget 1.21.3): the
/// blocks indented by two spaces, each ended by a line that is not.
const WGET_S: &str = "--2026-01-01 00:00:00--  http://127.0.0.1/moved\n\
    Connecting to 127.0.0.1:80... connected.\n\
    HTTP request sent, awaiting response... \n\
    \x20 HTTP/1.1 301 Moved Permanently\n  Location: /busy\n  Content-Length: 0\n\
    Location: /busy [following]\n\
    --2026-01-01 00:00:00--  http://127.0.0.1/busy\n\
    HTTP request sent, awaiting response... \n\
    \x20 HTTP/1.1 503 Service Unavailable\n  Server: x\n  Retry-After: 2\n  Content-Length: 14\n\
    2026-01-01 00:00:00 ERROR 503: Service Unavailable.\n\n";

#[test]
fn wget_s_blocks_are_read_and_end_at_a_line_not_indented() {
    assert_eq!(read_all(WGET_S), (Some(503), Some(2.0)));
    let gone = WGET_S.replace("503 Service Unavailable", "404 Not Found");
    assert_eq!(read_all(&gone), (Some(404), Some(2.0)));
    // -q -S: the blocks alone, the last ended by the stream's end; with no line end too.
    let quiet = "  HTTP/1.1 301 Moved\n  Location: /b\n  HTTP/1.1 404 Not Found\n  Server: x\n";
    assert_eq!(read_all(quiet), (Some(404), None));
    assert_eq!(read_all(quiet.trim_end()), (Some(404), None));
    // A block ended by an empty line, a line of one space, a huge line, a status line (of a
    // block cut).
    for end in [
        "\n".to_string(),
        " \n".to_string(),
        format!("{}\n", "x".repeat(100_000)),
        "HTTP/1.1 200 OK\n".to_string(),
    ] {
        let text = format!("  HTTP/1.1 429 Slow\n  Retry-After: 3\n{end}");
        assert_eq!(read_all(&text), (Some(429), Some(3.0)), "{end:.9?}");
    }
    // No body follows a block wget printed: what follows is read for a next response.
    let text = "  HTTP/1.1 200 OK\n  Content-Length: 40\nSaving to: 'x'\n\
                \x20 HTTP/1.1 503 Busy\n  Retry-After: 4\n";
    assert_eq!(read_all(text), (Some(503), Some(4.0)));
    // Fields: a field longer than any server sends, an indented line in a plain block.
    let long = format!(
        "  HTTP/1.1 503\n  Retry-After: 3{}\nx\n",
        "0".repeat(MAX_HEADER_LINE)
    );
    assert_eq!(read_all(&long), (Some(503), None));
    assert_eq!(
        read_all("HTTP/1.1 503\r\n  Retry-After: 3\r\n\r\n"),
        (Some(503), None)
    );
}

#[test]
fn an_indented_status_line_in_a_body_of_known_length_is_body() {
    let quoted = "  HTTP/1.1 404 Not Found\n  Retry-After: 3000\n";
    let text = format!(
        "HTTP/1.1 503 Busy\r\nRetry-After: 4\r\nContent-Length: {}\r\n\r\nsee:\n{quoted}",
        quoted.len() + 5
    );
    assert_eq!(read_all(&text), (Some(503), Some(4.0)));
}

#[test]
fn an_indented_status_line_after_a_plain_block_is_a_line_of_its_body() {
    // `curl -i` of a chunked body quoting `wget -S`: nothing of it is read.
    let quoted = "  HTTP/1.1 404 Not Found\n  Retry-After: 3000\nERROR 404: Not Found.\n";
    let text = format!("HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n{quoted}");
    assert_eq!(read_all(&text), (Some(503), None));
    // Nor in a block, nor right after one whose body is not here.
    let text = format!("HTTP/1.1 503 Busy\r\n{quoted}\r\n");
    assert_eq!(read_all(&text), (Some(503), None));
    let text = format!("HTTP/1.1 503 Busy\r\nContent-Length: 9\r\n\r\n{quoted}");
    assert_eq!(read_all(&text), (Some(503), None));
    // After curl -v's blocks, wget's are read (`curl -v ...; wget -S ...`, one stream).
    let text = format!("< HTTP/1.1 503 Busy\r\n< \r\n{quoted}");
    assert_eq!(read_all(&text), (Some(404), Some(3000.0)));
}
