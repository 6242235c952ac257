//! What a line of a crawl index says: the URI captured, and the digest of
//! the content it served when the capture is content at all (a 2xx
//! response, or a revisit record, which carries the digest of what it
//! revisits).
//!
//! A redirect (a 3xx) is no content, but where the index names its target
//! it is evidence: the URL redirected from serves what its target serves.
//!
//! Three shapes: delimited lines with a digest column (`url<TAB>digest`,
//! `--digest-field`); CDX files, whose ` CDX` header line names the fields
//! by letter (`a` the original URL, `k` the digest, `s` the status, `m` the
//! MIME type, `r` a redirect's target), in the classic layout of Heritrix,
//! pywb and Common Crawl (`N b a m s k r M S V g`, or its 9-field form)
//! when the header is absent; and CDXJ (`SURTKEY TIMESTAMP {json}` with
//! `url`, `digest`, `status`, `mime`, and `redirect` as pywb names `r`).
//!
//! It knows fields and records; nothing of files, threads or URIs' rules.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::line::{ColumnScratch, Columns};
use crate::pipeline::{Fault, Rejection};

/// How a run reads its lines: where the URI is (a column, or an index
/// record's URL, prepared as [`Columns`] say) and, for a crawl index,
/// the digest of the content it served. Each CDX input's layout is learnt
/// from its header line before its lines are read.
#[derive(Debug)]
pub struct IndexLines {
    columns: Columns,
    format: Option<IndexFormat>,
    layouts: Vec<OnceLock<CdxLayout>>,
}

impl IndexLines {
    /// Lines prepared as `columns` say, of `format` if they are an index,
    /// in `inputs` inputs.
    pub fn new(columns: Columns, format: Option<IndexFormat>, inputs: usize) -> IndexLines {
        IndexLines {
            columns,
            format,
            layouts: (0..inputs).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Whether each line is its URI as written.
    pub fn is_plain(&self) -> bool {
        self.columns.is_plain() && self.format.is_none()
    }

    /// Whether `line` is a header of the index, not a record.
    pub fn is_header(&self, line: &[u8]) -> bool {
        self.format.is_some_and(|f| is_header(f, line))
    }

    /// Reads the first line of input `source`: refuses an input that is
    /// not the index the flag says (a CDXJ given as CDX, a CDX as CDXJ, a
    /// WARC or ARC file as either), and takes a CDX input's layout from its
    /// header line. The error is a sentence about the input: what it
    /// looks like and the flag to give it with, or what its header lacks.
    pub fn learn_layout(&self, source: usize, first: &[u8]) -> Result<(), String> {
        let Some(format) = self.format else {
            return Ok(());
        };
        refuse_another_shape(format, first)?;
        if format != IndexFormat::Cdx {
            return Ok(());
        }
        match CdxLayout::from_header(first) {
            None => Ok(()),
            Some(Ok(layout)) => {
                let _ = self.layouts[source].set(layout);
                Ok(())
            }
            Some(Err(why)) => Err(why),
        }
    }

    fn layout(&self, source: usize) -> CdxLayout {
        *self.layouts[source].get().unwrap_or(&CdxLayout::CLASSIC)
    }

    /// Reads `line` (of input `source`) once: where its URI is, and the
    /// digest of the content it served if it is a capture of content. The
    /// error is a CDX or CDXJ line that is no record.
    pub fn read<'l>(&self, line: &'l [u8], source: usize) -> Result<IndexLine<'l>, Rejection> {
        let (text, record, digest, redirect) = match self.format {
            Some(format @ (IndexFormat::Cdx | IndexFormat::Cdxj)) => {
                let record = read(format, self.layout(source), line)?;
                // A revisit of a redirect carries a digest: content.
                let redirect = record.redirect.filter(|_| record.digest.is_none());
                (record.uri, true, record.digest, redirect)
            }
            Some(IndexFormat::Digest { column, delimiter }) => {
                let value = nth_field(line, delimiter, column);
                let digest = value.and_then(|v| content_digest(None, None, v));
                (Cow::Borrowed(line), false, digest.map(Cow::Borrowed), None)
            }
            None => (Cow::Borrowed(line), false, None, None),
        };
        Ok(IndexLine {
            text,
            record,
            digest,
            redirect,
        })
    }

    /// Calls `with` on the target of the redirect a line read is, if it is
    /// one whose target the index names: resolved against the record's URL
    /// (a `Location` may be a relative reference, RFC 9110 §10.2.2; RFC 3986
    /// §5.2 resolves it), prepared as [`Columns`] say. `None` for a line that
    /// is no redirect; the error is a target that is no URI reference.
    pub fn with_redirect_of<T>(
        &self,
        line: &IndexLine<'_>,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Option<Result<T, Rejection>> {
        let target = line.redirect.as_deref()?;
        let done = self
            .columns
            .with_reference(target, Some(&line.text), scratch, with);
        Some(done.map(|(t, _)| t))
    }

    /// Calls `with` on the URI a line read stands for: its column, or its
    /// record's URL, prepared as [`Columns`] say.
    pub fn with_uri_of<T>(
        &self,
        line: &IndexLine<'_>,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<T, Rejection> {
        match line.record {
            true => self.columns.with_reference(&line.text, None, scratch, with),
            false => self.columns.with_uri(&line.text, scratch, with),
        }
        .map(|(t, _)| t)
    }

    /// [`IndexLines::with_uri_of`] on `line`, of input `source`, read.
    pub fn with_uri<T>(
        &self,
        line: &[u8],
        source: usize,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<T, Rejection> {
        self.with_uri_of(&self.read(line, source)?, scratch, with)
    }

    /// The digest of the content `line` (of input `source`) says its URI
    /// served, if the line is a capture of content.
    pub fn digest<'l>(&self, line: &'l [u8], source: usize) -> Option<Cow<'l, [u8]>> {
        self.read(line, source).ok()?.digest
    }
}

/// Field `n` (0-based) of `line`, fields separated by `delimiter`: found
/// with `memchr`, not a test of each byte (a digest column is read on every
/// line of an index).
fn nth_field(line: &[u8], delimiter: u8, n: usize) -> Option<&[u8]> {
    let mut ends = memchr::memchr_iter(delimiter, line).chain([line.len()]);
    let start = match n {
        0 => 0,
        n => ends.nth(n - 1)? + 1,
    };
    ends.next().map(|end| &line[start..end])
}

/// What an input's first line looks like, by its shape alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// `WARC/1.0`: a WARC record's version line (a `.warc.gz` is read
    /// decompressed).
    Warc,
    /// `filedesc://`: an ARC file's version block.
    Arc,
    /// A CDX header, or a record of at least 9 space-separated fields and
    /// no JSON object.
    Cdx,
    /// `KEY TIMESTAMP {`, or a `!` header line.
    Cdxj,
}

impl Shape {
    /// The shape of `line`; `None` for none of these (the line is left to
    /// be read, and rejected there).
    fn of(line: &[u8]) -> Option<Shape> {
        if line.starts_with(b"WARC/") {
            return Some(Shape::Warc);
        }
        if line.starts_with(b"filedesc://") {
            return Some(Shape::Arc);
        }
        if line.starts_with(b"!") {
            return Some(Shape::Cdxj);
        }
        if CdxLayout::from_header(line).is_some() {
            return Some(Shape::Cdx);
        }
        let mut fields = line.splitn(3, |&b| b == b' ');
        if fields.nth(2).is_some_and(|json| json.starts_with(b"{")) {
            return Some(Shape::Cdxj);
        }
        let cdx = line.split(|&b| b == b' ').count() >= 9 && !line.contains(&b'{');
        cdx.then_some(Shape::Cdx)
    }

    /// What an input of this shape is, and how it is given.
    fn described(self) -> &'static str {
        match self {
            Shape::Warc => "a WARC file, not a crawl index: give it with --warc",
            Shape::Arc => {
                "an ARC file, not a crawl index: index it first (cdxj-indexer) and give the index with --cdxj"
            }
            Shape::Cdx => "a CDX index (space-separated fields): give it with --cdx",
            Shape::Cdxj => {
                "a CDXJ index (a SURT key, a timestamp and a JSON object): give it with --cdxj"
            }
        }
    }
}

/// The refusal of an input whose first line is not of `format`: a CDXJ
/// index given as CDX, a CDX index as CDXJ, a WARC or ARC file as any
/// index. A first line of no known shape is not judged here.
fn refuse_another_shape(format: IndexFormat, first: &[u8]) -> Result<(), String> {
    let Some(shape) = Shape::of(first) else {
        return Ok(());
    };
    let fits = match (format, shape) {
        (_, Shape::Warc | Shape::Arc) => false,
        (IndexFormat::Cdx, cdx) => cdx == Shape::Cdx,
        (IndexFormat::Cdxj, cdxj) => cdxj == Shape::Cdxj,
        (IndexFormat::Digest { .. }, _) => true,
    };
    match fits {
        true => Ok(()),
        false => Err(format!("it looks like {}", shape.described())),
    }
}

/// A line of an index read once ([`IndexLines::read`]).
#[derive(Debug)]
pub struct IndexLine<'l> {
    /// The line, or its record's URL (a CDXJ value unescaped).
    text: Cow<'l, [u8]>,
    /// Whether `text` is a record's URL rather than the whole line.
    record: bool,
    /// The digest of its content, when it is a capture of content.
    pub digest: Option<Cow<'l, [u8]>>,
    /// The target of a redirect, as the index writes it (maybe relative).
    redirect: Option<Cow<'l, [u8]>>,
}

impl IndexLine<'_> {
    /// Whether the line is a redirect whose target the index names.
    pub fn is_redirect(&self) -> bool {
        self.redirect.is_some()
    }
}

/// How the lines of an index are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexFormat {
    /// Delimited lines: the URI where `--field` says, the digest in this
    /// 0-based column; every line with a digest is content.
    Digest { column: usize, delimiter: u8 },
    /// CDX: fields separated by spaces, named by the input's header line.
    Cdx,
    /// CDXJ: a SURT key, a timestamp and a JSON object.
    Cdxj,
}

/// Where a CDX line's fields are, by the letters of its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CdxLayout {
    /// `a`: the original URL.
    pub url: usize,
    /// `k` (the digest), or `c` (the old style checksum) when there is no `k`.
    pub digest: usize,
    /// `s`: the HTTP status; without it every capture counts as content.
    pub status: Option<usize>,
    /// `m`: the MIME type (`warc/revisit` marks a revisit).
    pub mime: Option<usize>,
    /// `r`: a redirect's target (`-` where there is none).
    pub redirect: Option<usize>,
}

impl CdxLayout {
    /// `N b a m s k r M S V g`: the layout of Heritrix's, pywb's and Common
    /// Crawl's CDX files; the 9-field form (`N b a m s k r V g`) agrees on
    /// every field read here.
    pub const CLASSIC: CdxLayout = CdxLayout {
        url: 2,
        digest: 5,
        status: Some(4),
        mime: Some(3),
        redirect: Some(6),
    };

    /// The layout a header line names, `None` if `line` is no CDX header;
    /// an error names a field it lacks.
    ///
    /// ```
    /// use urinorm::line::crawl_index::CdxLayout;
    /// let layout = CdxLayout::from_header(b" CDX N b a m s k r M S V g").unwrap()?;
    /// assert_eq!(layout, CdxLayout::CLASSIC);
    /// assert!(CdxLayout::from_header(b"com,example)/ 2020").is_none());
    /// # Ok::<(), String>(())
    /// ```
    pub fn from_header(line: &[u8]) -> Option<Result<CdxLayout, String>> {
        let rest = line.trim_ascii_start().strip_prefix(b"CDX ")?;
        let letters: Vec<&[u8]> = rest
            .split(|&b| b == b' ')
            .filter(|f| !f.is_empty())
            .collect();
        if letters.iter().any(|l| l.len() != 1) {
            return None;
        }
        let at = |letter: u8| letters.iter().position(|l| l[0] == letter);
        let Some(url) = at(b'a') else {
            return Some(Err(
                "its CDX header names no original URL field ('a')".into()
            ));
        };
        let Some(digest) = at(b'k').or(at(b'c')) else {
            return Some(Err(
                "its CDX header names no digest field ('k' or 'c')".into()
            ));
        };
        Some(Ok(CdxLayout {
            url,
            digest,
            status: at(b's'),
            mime: at(b'm'),
            redirect: at(b'r'),
        }))
    }
}

/// What one line of an index says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<'l> {
    /// The URI as captured (a CDXJ value unescaped).
    pub uri: Cow<'l, [u8]>,
    /// The digest of its content, when the capture is content (`sha1:` dropped).
    pub digest: Option<Cow<'l, [u8]>>,
    /// The target of a redirect (a 3xx), where the index names one.
    pub redirect: Option<Cow<'l, [u8]>>,
}

/// A CDXJ record's fields that matter here.
#[derive(Deserialize)]
struct CdxjFields<'l> {
    #[serde(borrow)]
    url: Option<Cow<'l, str>>,
    #[serde(borrow)]
    digest: Option<Cow<'l, str>>,
    #[serde(borrow)]
    mime: Option<Cow<'l, str>>,
    status: Option<serde_json::Value>,
    #[serde(borrow)]
    redirect: Option<Cow<'l, str>>,
}

/// A line of an index that is not a record: a CDX header, a CDXJ line
/// that starts with `!` (`!meta`, `!OpenWayback-CDXJ`).
pub fn is_header(format: IndexFormat, line: &[u8]) -> bool {
    match format {
        IndexFormat::Digest { .. } => false,
        IndexFormat::Cdx => CdxLayout::from_header(line).is_some(),
        IndexFormat::Cdxj => line.starts_with(b"!"),
    }
}

/// Reads a CDX or CDXJ line (`layout` is the CDX input's). The error is a
/// line's rejection: a missing field, or a CDXJ line that is not one.
pub fn read<'l>(
    format: IndexFormat,
    layout: CdxLayout,
    line: &'l [u8],
) -> Result<Record<'l>, Rejection> {
    match format {
        IndexFormat::Digest { .. } => unreachable!("delimited lines are read by their columns"),
        IndexFormat::Cdx => read_cdx(layout, line),
        IndexFormat::Cdxj => read_cdxj(line),
    }
}

fn read_cdx(layout: CdxLayout, line: &[u8]) -> Result<Record<'_>, Rejection> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let field = |n: usize| {
        fields
            .get(n)
            .copied()
            .ok_or(Rejection::new(Fault::MissingField { length: line.len() }))
    };
    let uri = field(layout.url)?;
    let digest = field(layout.digest)?;
    let status = layout.status.map(field).transpose()?;
    let mime = layout.mime.map(field).transpose()?;
    // The redirect field is not needed to read a capture: a line too short
    // for it names no target.
    let target = layout.redirect.and_then(|n| fields.get(n).copied());
    Ok(Record {
        uri: Cow::Borrowed(uri),
        digest: content_digest(status, mime, digest).map(Cow::Borrowed),
        redirect: redirect_target(status, target).map(Cow::Borrowed),
    })
}

fn read_cdxj(line: &[u8]) -> Result<Record<'_>, Rejection> {
    let not_cdxj = || Rejection::new(Fault::NotAnIndexRecord);
    let json = memchr::memchr(b'{', line).ok_or_else(not_cdxj)?;
    let fields: CdxjFields<'_> = serde_json::from_slice(&line[json..]).map_err(|_| not_cdxj())?;
    let uri = fields.url.ok_or_else(not_cdxj)?;
    let status = match fields.status {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    // A record without a status (a `metadata` or `resource` record, which
    // no server sent) is not content, as its `-` in a CDX file says.
    let status = Some(status.as_deref().map_or(&b"-"[..], str::as_bytes));
    let mime = fields.mime.as_deref().map(str::as_bytes);
    let digest = fields
        .digest
        .filter(|d| content_digest(status, mime, d.as_bytes()).is_some())
        .map(cow_bytes)
        .map(without_algorithm);
    let redirect = fields
        .redirect
        .filter(|r| redirect_target(status, Some(r.as_bytes())).is_some())
        .map(cow_bytes);
    Ok(Record {
        uri: cow_bytes(uri),
        digest,
        redirect,
    })
}

fn cow_bytes(text: Cow<'_, str>) -> Cow<'_, [u8]> {
    match text {
        Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
        Cow::Owned(s) => Cow::Owned(s.into_bytes()),
    }
}

fn without_algorithm(digest: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match digest {
        Cow::Borrowed(d) => Cow::Borrowed(strip_algorithm(d)),
        Cow::Owned(d) => Cow::Owned(strip_algorithm(&d).to_vec()),
    }
}

/// A digest without its `sha1:` prefix: CDX writes the base32 alone, CDXJ
/// and WARC headers often with it.
fn strip_algorithm(digest: &[u8]) -> &[u8] {
    match digest.get(..5) {
        Some(prefix) if prefix.eq_ignore_ascii_case(b"sha1:") => &digest[5..],
        _ => digest,
    }
}

/// The digest of a capture with this status and MIME type, if it is
/// content: a 2xx response, or a revisit (which carries the digest of what
/// it revisits); none for `-` or an empty digest. A record whose status is
/// `-` (a CDX field) or absent (a CDXJ key) is not content; `status` is
/// `None` only where the index has no status at all (a CDX header without
/// `s`, a `--digest-field` list), and every capture counts.
pub fn content_digest<'d>(
    status: Option<&[u8]>,
    mime: Option<&[u8]>,
    digest: &'d [u8],
) -> Option<&'d [u8]> {
    let ok = status.is_none_or(|s| status_class(s) == Some(b'2'));
    let revisit = mime.is_some_and(|m| m.eq_ignore_ascii_case(b"warc/revisit"));
    let digest = strip_algorithm(digest);
    (ok || revisit)
        .then_some(digest)
        .filter(|d| !d.is_empty() && *d != b"-")
}

/// The target of a capture with this status, if it is a redirect that
/// names one: a 3xx (RFC 9110 §15.4) whose target field is neither empty
/// nor `-`.
fn redirect_target<'t>(status: Option<&[u8]>, target: Option<&'t [u8]>) -> Option<&'t [u8]> {
    let redirect = status.is_some_and(|s| status_class(s) == Some(b'3'));
    target.filter(|t| redirect && !t.is_empty() && *t != b"-")
}

/// The class of an HTTP status code (RFC 9110 §15: its first digit, `b'2'`
/// for a 2xx), if `status` is one: three digits.
fn status_class(status: &[u8]) -> Option<u8> {
    let code = status.len() == 3 && status.iter().all(u8::is_ascii_digit);
    code.then(|| status[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(format: IndexFormat, line: &str) -> Result<(String, Option<String>), Fault> {
        read(format, CdxLayout::CLASSIC, line.as_bytes())
            .map(|r| {
                (
                    String::from_utf8(r.uri.into_owned()).unwrap(),
                    r.digest.map(|d| String::from_utf8(d.into_owned()).unwrap()),
                )
            })
            .map_err(|e| e.fault().clone())
    }

    fn some(uri: &str, digest: Option<&str>) -> Result<(String, Option<String>), Fault> {
        Ok((uri.to_string(), digest.map(str::to_string)))
    }

    #[test]
    fn cdx_lines_by_the_classic_layout() {
        let line = "com,example)/ 20200101000000 http://example.com/ text/html 200 AAAA - - 123 456 f.warc.gz";
        assert_eq!(
            record(IndexFormat::Cdx, line),
            some("http://example.com/", Some("AAAA"))
        );
        // Nine fields: the same positions.
        let nine =
            "com,example)/ 20200101000000 http://example.com/ text/html 200 AAAA - 456 f.warc.gz";
        assert_eq!(
            record(IndexFormat::Cdx, nine),
            some("http://example.com/", Some("AAAA"))
        );
        let moved = "com,example)/ 2020 http://example.com/ text/html 301 BBBB http://example.com/x - 1 2 f";
        assert_eq!(
            record(IndexFormat::Cdx, moved),
            some("http://example.com/", None)
        );
        let revisit = "com,example)/ 2020 http://example.com/ warc/revisit - CCCC - - 1 2 f";
        assert_eq!(
            record(IndexFormat::Cdx, revisit),
            some("http://example.com/", Some("CCCC"))
        );
        assert_eq!(
            record(IndexFormat::Cdx, "com,example)/ 2020"),
            Err(Fault::MissingField { length: 18 })
        );
    }

    proptest::proptest! {
        /// The field found by `memchr` is the one a split of every byte finds.
        #[test]
        fn nth_field_is_the_split_s(
            line in proptest::collection::vec(proptest::sample::select(b"ab\t,".to_vec()), 0..24),
            n in 0usize..6,
        ) {
            let naive = line.split(|&b| b == b'\t').nth(n);
            proptest::prop_assert_eq!(nth_field(&line, b'\t', n), naive);
        }
    }

    #[test]
    fn a_redirect_names_its_target_in_cdx_and_cdxj_alike() {
        let target = |format, line: &str| {
            let record = read(format, CdxLayout::CLASSIC, line.as_bytes()).unwrap();
            record
                .redirect
                .map(|r| String::from_utf8(r.into_owned()).unwrap())
        };
        let cdx = "com,a)/b 2020 http://a/b text/html 301 BBBB http://a/b/ - 1 2 f";
        assert_eq!(
            target(IndexFormat::Cdx, cdx).as_deref(),
            Some("http://a/b/")
        );
        let cdxj = r#"com,a)/b 2020 {"url": "http://a/b", "status": "301", "redirect": "/b/"}"#;
        assert_eq!(target(IndexFormat::Cdxj, cdxj).as_deref(), Some("/b/"));
        // No target named, or not a 3xx: no redirect.
        for line in [
            "com,a)/b 2020 http://a/b text/html 302 BBBB - - 1 2 f",
            "com,a)/b 2020 http://a/b text/html 200 BBBB http://a/c - 1 2 f",
            "com,a)/b 2020 http://a/b text/html 301 BBBB",
        ] {
            assert_eq!(target(IndexFormat::Cdx, line), None, "{line}");
        }
        let ok =
            r#"a 1 {"url": "http://a/", "status": 200, "digest": "B", "redirect": "http://c/"}"#;
        assert_eq!(target(IndexFormat::Cdxj, ok), None);
        // A revisit of a redirect is content (the digest it revisits).
        let cdx_lines = IndexLines::new(Columns::default(), Some(IndexFormat::Cdx), 1);
        let revisit = "com,a)/b 2020 http://a/b warc/revisit 301 BBBB http://a/b/ - 1 2 f";
        let read = cdx_lines.read(revisit.as_bytes(), 0).unwrap();
        assert!(read.digest.is_some() && !read.is_redirect());
        // Resolved against the record's URL when it is read.
        let lines = IndexLines::new(Columns::default(), Some(IndexFormat::Cdxj), 1);
        let read = lines.read(cdxj.as_bytes(), 0).unwrap();
        assert!(read.is_redirect());
        let mut scratch = ColumnScratch::default();
        let resolved = lines.with_redirect_of(&read, &mut scratch, |t| Ok(t.to_vec()));
        assert_eq!(resolved.unwrap().unwrap(), b"http://a/b/");
        let content = lines.read(ok.as_bytes(), 0).unwrap();
        assert!(
            lines
                .with_redirect_of(&content, &mut scratch, |_| Ok(()))
                .is_none()
        );
    }

    #[test]
    fn cdx_headers_name_the_fields() {
        let old = CdxLayout::from_header(b" CDX A b e a m s c k r V v D d g M n").unwrap();
        assert_eq!(
            old,
            Ok(CdxLayout {
                url: 3,
                digest: 7,
                status: Some(5),
                mime: Some(4),
                redirect: Some(8),
            })
        );
        assert!(CdxLayout::from_header(b" CDX N b m s k").unwrap().is_err());
        assert!(CdxLayout::from_header(b" CDX N b a m s").unwrap().is_err());
        assert!(is_header(IndexFormat::Cdx, b" CDX N b a m s k r M S V g"));
        assert!(!is_header(IndexFormat::Cdx, b"CDX is not a header line"));
        assert!(is_header(IndexFormat::Cdxj, b"!meta 0 {}"));
    }

    #[test]
    fn an_input_of_another_shape_is_refused_by_its_first_line() {
        let cdx = b"com,example)/ 20200101000000 http://example.com/ text/html 200 AAAA - - 1 2 f.warc.gz";
        let cdxj = br#"com,example)/ 20200101000000 {"url": "http://example.com/"}"#;
        let refusal = |format, line: &[u8]| refuse_another_shape(format, line).err();
        assert_eq!(refusal(IndexFormat::Cdx, cdx), None);
        assert_eq!(
            refusal(IndexFormat::Cdx, b" CDX N b a m s k r M S V g"),
            None
        );
        assert_eq!(refusal(IndexFormat::Cdxj, cdxj), None);
        assert_eq!(refusal(IndexFormat::Cdxj, b"!meta 0 {}"), None);
        let said = refusal(IndexFormat::Cdx, cdxj).unwrap();
        assert!(said.contains("CDXJ") && said.ends_with("--cdxj"), "{said}");
        let said = refusal(IndexFormat::Cdxj, cdx).unwrap();
        assert!(
            said.contains("a CDX index") && said.ends_with("--cdx"),
            "{said}"
        );
        let said = refusal(IndexFormat::Cdxj, b" CDX N b a m s k").unwrap();
        assert!(said.ends_with("--cdx"), "{said}");
        for format in [
            IndexFormat::Cdx,
            IndexFormat::Cdxj,
            IndexFormat::Digest {
                column: 1,
                delimiter: b'\t',
            },
        ] {
            assert!(
                refusal(format, b"WARC/1.1")
                    .unwrap()
                    .contains("a WARC file")
            );
            assert!(
                refusal(format, b"filedesc://x.arc 0.0.0.0 2020 text/plain 1")
                    .unwrap()
                    .contains("an ARC file")
            );
        }
        // A line of no known shape is left to be read, and rejected there.
        assert_eq!(refusal(IndexFormat::Cdxj, b"http://a/ x"), None);
        assert_eq!(refusal(IndexFormat::Cdx, b"http://a/ x"), None);
    }

    #[test]
    fn cdxj_records() {
        let line = r#"com,example)/ 20200101000000 {"url": "http://example.com/\u00e9", "mime": "text/html", "status": "200", "digest": "sha1:AAAA"}"#;
        assert_eq!(
            record(IndexFormat::Cdxj, line),
            some("http://example.com/é", Some("AAAA"))
        );
        let number = r#"a 1 {"url": "http://a/", "status": 200, "digest": "B"}"#;
        assert_eq!(
            record(IndexFormat::Cdxj, number),
            some("http://a/", Some("B"))
        );
        let missing = r#"a 1 {"url": "http://a/", "status": "404", "digest": "B"}"#;
        assert_eq!(record(IndexFormat::Cdxj, missing), some("http://a/", None));
        // No status: a metadata record, not content, as in CDX.
        let metadata = r#"a 1 {"url": "metadata://a/m", "mime": "text/plain", "digest": "D"}"#;
        assert_eq!(
            record(IndexFormat::Cdxj, metadata),
            some("metadata://a/m", None)
        );
        let as_cdx = "a 1 metadata://a/m text/plain - D - - 1 2 f";
        assert_eq!(
            record(IndexFormat::Cdx, as_cdx),
            some("metadata://a/m", None)
        );
        let revisit = r#"a 1 {"url": "http://a/", "mime": "warc/revisit", "digest": "C"}"#;
        assert_eq!(
            record(IndexFormat::Cdxj, revisit),
            some("http://a/", Some("C"))
        );
        for bad in ["a 1 {\"url\": ", "a 1 no json", r#"a 1 {"digest": "C"}"#] {
            assert_eq!(
                record(IndexFormat::Cdxj, bad),
                Err(Fault::NotAnIndexRecord),
                "{bad}"
            );
        }
    }
}
