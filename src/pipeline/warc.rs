//! A WARC file (ISO 28500) read as the crawl index it makes: one CDXJ line
//! a `response`, `revisit`, `resource` or `metadata` record, as
//! `cdxj-indexer` indexes them (its `url`, `digest`, `status` and `mime`),
//! so that `--warc` judges a crawl as `--cdxj` of its index does. A
//! response's status is its HTTP status line's, and a redirect's target its
//! `Location` header (`redirect`, as pywb names CDX's `r`); a revisit is marked
//! `warc/revisit` and carries the digest of what it revisits; a resource
//! or metadata record has no status (no server sent it), so it is counted
//! and not content. The records are read by the `warc` crate, from the
//! file decompressed as every input is (a `.warc.gz` is a gzip member a
//! record).
//!
//! It knows WARC records and the index fields made of them; nothing of
//! URIs' rules or of threads.

use std::io::BufRead;

use serde::Serialize;
use warc::{RawRecordHeader, WarcHeader, WarcReader};

/// The fields of one index line, in CDXJ's names.
#[derive(Serialize)]
struct IndexFields<'r> {
    url: &'r str,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    redirect: Option<&'r str>,
}

/// The CDXJ lines of the WARC records `reader` holds (decompressed), one
/// a record that is a capture or a crawler's own record, in order; a
/// `warcinfo` or `request` record makes none. The error says why the
/// bytes are not a WARC file, or which record could not be read.
///
/// ```
/// use urinorm::pipeline::warc::index_lines;
/// let record = "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.example/\r\n\
///               WARC-Payload-Digest: sha1:AAAA\r\nContent-Length: 19\r\n\r\nHTTP/1.1 200 OK\r\n\r\n\r\n\r\n";
/// let lines = index_lines(record.as_bytes())?;
/// assert_eq!(lines, b"- - {\"url\":\"http://a.example/\",\"digest\":\"sha1:AAAA\",\"status\":\"200\"}\n");
/// # Ok::<(), String>(())
/// ```
pub fn index_lines(mut reader: impl BufRead) -> Result<Vec<u8>, String> {
    let start = reader.fill_buf().map_err(|e| e.to_string())?;
    if !start.starts_with(b"WARC/") {
        return Err(
            "it is not a WARC file (its first line is no WARC/1.x version line): give a crawl \
             index with --cdx or --cdxj"
                .into(),
        );
    }
    let mut lines = Vec::new();
    for (n, record) in WarcReader::new(reader).iter_raw_records().enumerate() {
        let (header, block) =
            record.map_err(|e| format!("record {} cannot be read: {e}", n + 1))?;
        write_index_line(&header, &block, &mut lines);
    }
    Ok(lines)
}

/// Appends the index line of one record to `lines`, if it makes one.
fn write_index_line(header: &RawRecordHeader, block: &[u8], lines: &mut Vec<u8>) {
    let field = |name: WarcHeader| {
        (header.as_ref().get(&name)).map(|v| String::from_utf8_lossy(v).trim().to_string())
    };
    let Some(kind) = field(WarcHeader::WarcType) else {
        return;
    };
    let Some(url) = field(WarcHeader::TargetURI) else {
        return;
    };
    // WARC 1.0's own examples write the URI in angle brackets.
    let url = url.trim_start_matches('<').trim_end_matches('>');
    let status = http_status(block);
    let (status, mime) = match kind.to_ascii_lowercase().as_str() {
        "response" => (status, None),
        "revisit" => (status, Some("warc/revisit")),
        "resource" | "metadata" => (None, None),
        _ => return,
    };
    let digest = field(WarcHeader::PayloadDigest).or_else(|| field(WarcHeader::BlockDigest));
    let location = match status {
        Some(code) if code.starts_with('3') => location(block),
        _ => None,
    };
    let fields = IndexFields {
        url,
        digest: digest.as_deref(),
        status,
        mime,
        redirect: location.as_deref(),
    };
    lines.extend_from_slice(b"- - ");
    serde_json::to_writer(&mut *lines, &fields).expect("a Vec takes any bytes");
    lines.push(b'\n');
}

/// The status code of the HTTP response a record's block begins with
/// (`HTTP/1.1 200 OK`), if it begins with one.
fn http_status(block: &[u8]) -> Option<&str> {
    let line = block.split(|&b| b == b'\n').next()?;
    let mut words = line.split(|&b| b == b' ');
    let version = words.next()?;
    let code = words.next()?.trim_ascii();
    let is_code = code.len() == 3 && code.iter().all(u8::is_ascii_digit);
    (version.starts_with(b"HTTP/") && is_code).then(|| std::str::from_utf8(code).expect("digits"))
}

/// The `Location` header of the HTTP response a record's block begins
/// with, read by `httparse` from the headers after the status line.
fn location(block: &[u8]) -> Option<String> {
    let headers_start = memchr::memchr(b'\n', block)? + 1;
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let parsed = httparse::parse_headers(&block[headers_start..], &mut headers).ok()?;
    let httparse::Status::Complete((_, headers)) = parsed else {
        return None;
    };
    let value = headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("location"))?
        .value;
    let value = String::from_utf8_lossy(value).trim().to_string();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `kind` with these headers and block, as a WARC writes it.
    fn record(kind: &str, headers: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\n{headers}Content-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    #[test]
    fn captures_revisits_and_a_crawlers_own_records_become_index_lines() {
        let warc = [
            record("warcinfo", "", "software: wget\r\n"),
            record(
                "request",
                "WARC-Target-URI: http://a/\r\n",
                "GET / HTTP/1.1\r\n\r\n",
            ),
            record(
                "response",
                "WARC-Target-URI: <http://a/>\r\nWARC-Payload-Digest: sha1:D1\r\n",
                "HTTP/1.1 404 Not Found\r\n\r\ngone",
            ),
            record(
                "revisit",
                "WARC-Target-URI: http://a/b\r\nWARC-Payload-Digest: sha1:D2\r\n",
                "HTTP/1.1 200 OK\r\n\r\n",
            ),
            record(
                "metadata",
                "WARC-Target-URI: metadata://gnu.org/m\r\nWARC-Block-Digest: sha1:M\r\n",
                "x",
            ),
        ]
        .concat();
        let lines = String::from_utf8(index_lines(warc.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            lines.lines().collect::<Vec<_>>(),
            [
                r#"- - {"url":"http://a/","digest":"sha1:D1","status":"404"}"#,
                r#"- - {"url":"http://a/b","digest":"sha1:D2","status":"200","mime":"warc/revisit"}"#,
                r#"- - {"url":"metadata://gnu.org/m","digest":"sha1:M"}"#,
            ]
        );
    }

    #[test]
    fn what_is_not_a_warc_file_is_refused_and_a_truncated_record_named() {
        let said = index_lines(&b"com,a)/ 2020 {\"url\": \"http://a/\"}\n"[..]).unwrap_err();
        assert!(said.starts_with("it is not a WARC file"), "{said}");
        let whole = record(
            "response",
            "WARC-Target-URI: http://a/\r\n",
            "HTTP/1.1 200 OK\r\n\r\n",
        );
        let cut = format!("{whole}{}", &whole[..whole.len() - 10]);
        let said = index_lines(cut.as_bytes()).unwrap_err();
        assert!(said.starts_with("record 2 cannot be read"), "{said}");
        assert_eq!(http_status(b"HTTP/1.0 301 Moved\r\n"), Some("301"));
    }

    #[test]
    fn a_redirect_names_its_location() {
        let warc = [
            record(
                "response",
                "WARC-Target-URI: http://a/book\r\n",
                "HTTP/1.1 301 Moved Permanently\r\nServer: x\r\nlocation: /book/ \r\n\r\n",
            ),
            // A 200 with a Location is no redirect; a 302 without one names none.
            record(
                "response",
                "WARC-Target-URI: http://a/c\r\nWARC-Payload-Digest: sha1:C\r\n",
                "HTTP/1.1 200 OK\r\nLocation: /d\r\n\r\nc",
            ),
            record(
                "response",
                "WARC-Target-URI: http://a/e\r\n",
                "HTTP/1.1 302 Found\r\n\r\n",
            ),
        ]
        .concat();
        let lines = String::from_utf8(index_lines(warc.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            lines.lines().collect::<Vec<_>>(),
            [
                r#"- - {"url":"http://a/book","status":"301","redirect":"/book/"}"#,
                r#"- - {"url":"http://a/c","digest":"sha1:C","status":"200"}"#,
                r#"- - {"url":"http://a/e","status":"302"}"#,
            ]
        );
        assert_eq!(http_status(b"GET / HTTP/1.1\r\n"), None);
    }
}
