//! Untrusted bytes made safe to show a person: a URL list is untrusted
//! input, and a terminal obeys the control sequences written to it (an
//! escape sequence can retitle the window, clear the screen, or hide text).
//! Every diagnostic that shows bytes from the input goes through [`escape`].
//!
//! It knows characters, nothing of URIs or where the text goes.

use std::fmt::Write;

/// `bytes` as text with nothing a terminal would act on: printable ASCII
/// as itself (a backslash doubled, so the escapes stay unambiguous); tab,
/// newline and carriage return as `\t`, `\n`, `\r`; every other control
/// byte and every byte of invalid UTF-8 as `\xNN`; a valid character that is
/// a C1 control or a character that reorders or hides text (bidirectional
/// controls, zero-width characters, the byte order mark) as `\u{NNNN}`;
/// other characters as themselves. Past `max` characters of output the
/// text is cut, and `…` says so.
///
/// ```
/// use urinorm_uri::escape::escape;
/// assert_eq!(escape(b"http://a/\x1b]0;pwned\x07", 80), "http://a/\\x1b]0;pwned\\x07");
/// assert_eq!(escape("http://b\u{fc}cher.de/\u{202e}".as_bytes(), 80), "http://b\u{fc}cher.de/\\u{202e}");
/// assert_eq!(escape(b"a\\b\xff", 80), "a\\\\b\\xff");
/// assert_eq!(escape(b"http://example.com/", 10), "http://exa…");
/// ```
pub fn escape(bytes: &[u8], max: usize) -> String {
    let mut out = String::with_capacity(bytes.len().min(max) + 8);
    let mut shown = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown == max {
                out.push('…');
                return out;
            }
            push_char(&mut out, c);
            shown += 1;
        }
        for &b in chunk.invalid() {
            if shown == max {
                out.push('…');
                return out;
            }
            let _ = write!(out, "\\x{b:02x}");
            shown += 1;
        }
    }
    out
}

/// How much of a line a diagnostic shows, in characters: enough for any
/// real URL, little enough for a terminal.
pub const SHOWN: usize = 200;

/// [`escape`] of a `str`, up to [`SHOWN`] characters: for names and values
/// that come from the user or the input, in messages.
pub fn escape_str(text: &str) -> String {
    escape(text.as_bytes(), SHOWN)
}

fn push_char(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if c.is_ascii_control() => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if c.is_control() || hides_or_reorders(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// Characters that change how the text around them is shown: the
/// bidirectional controls (which can make a line read backwards), the
/// zero-width and invisible ones, and the byte order mark.
fn hides_or_reorders(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{00ad}'
        | '\u{061c}'
        | '\u{180e}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a terminal could act on any of `text`.
    fn has_control(text: &str) -> bool {
        text.chars().any(|c| c.is_control() || hides_or_reorders(c))
    }

    #[test]
    fn every_byte_alone_and_in_sequences_comes_out_inert() {
        for b in 0..=255u8 {
            for bytes in [
                vec![b],
                vec![b'a', b, b'z'],
                vec![0xc2, b],
                vec![0xe2, 0x80, b],
            ] {
                let shown = escape(&bytes, SHOWN);
                assert!(!has_control(&shown), "{bytes:?} -> {shown:?}");
            }
        }
        let attacks: [&[u8]; 4] = [
            b"\x1b]0;pwned\x07\x1b[2J",
            b"\x9b31m",
            "\u{9b}31m\u{202e}gpj.exe".as_bytes(),
            b"\x1bP+q\x1b\\",
        ];
        for attack in attacks {
            assert!(!has_control(&escape(attack, SHOWN)), "{attack:?}");
        }
    }

    #[test]
    fn what_is_shown_reads_back_to_the_bytes() {
        // A naive decoder of the escapes, as an oracle.
        fn unescape(text: &str) -> Vec<u8> {
            let mut out = Vec::new();
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c != '\\' {
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    continue;
                }
                match chars.next() {
                    Some('\\') => out.push(b'\\'),
                    Some('t') => out.push(b'\t'),
                    Some('n') => out.push(b'\n'),
                    Some('r') => out.push(b'\r'),
                    Some('x') => {
                        let hex: String = chars.by_ref().take(2).collect();
                        out.push(u8::from_str_radix(&hex, 16).unwrap());
                    }
                    Some('u') => {
                        let hex: String =
                            chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                        let c = char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap();
                        let mut buf = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    other => panic!("unknown escape {other:?}"),
                }
            }
            out
        }
        let all: Vec<u8> = (0..=255).collect();
        for bytes in [&all[..], "a\u{202e}b\u{fc}\u{9b}".as_bytes(), b"\\x41"] {
            assert_eq!(unescape(&escape(bytes, usize::MAX)), bytes);
        }
    }

    #[test]
    fn long_text_is_cut_visibly() {
        let long = "x".repeat(500);
        let shown = escape(long.as_bytes(), SHOWN);
        assert_eq!(shown.chars().count(), SHOWN + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(escape(b"short", SHOWN), "short");
    }
}
