//! What a stream is, told by its first bytes (never by a file's name):
//! the magic numbers of the compressed formats urinorm reads (gzip, zstd,
//! bzip2) and of those it names but does not read (xz, lz4).
//!
//! It knows magic numbers; not how a stream is read or decompressed.

/// A compressed format urinorm reads (and writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// gzip (RFC 1952); a file may hold many members, read one after another.
    Gzip,
    /// Zstandard (RFC 8878); a file may hold many frames.
    Zstd,
    /// bzip2; a file may hold many streams (as `pbzip2` writes).
    Bzip2,
}

impl Format {
    /// The format's name, as messages say it.
    ///
    /// ```
    /// assert_eq!(urinorm::pipeline::Format::Zstd.name(), "zstd");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Zstd => "zstd",
            Format::Bzip2 => "bzip2",
        }
    }
}

/// What a stream's first bytes say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Lines as they are.
    Plain,
    Compressed(Format),
    /// A compressed format urinorm does not read: its name, and the
    /// command that decompresses it.
    Unsupported(&'static str, &'static str),
    /// The bytes so far begin a magic number: more are needed to tell.
    NeedMore,
}

/// The most first bytes [`sniff`] looks at.
pub(crate) const MAGIC_BYTES: usize = 10;

/// A magic number: each byte as an inclusive range of values.
type Magic = &'static [(u8, u8)];

/// A magic number of fixed bytes.
const fn exactly<const N: usize>(bytes: [u8; N]) -> [(u8, u8); N] {
    let mut magic = [(0, 0); N];
    let mut i = 0;
    while i < N {
        magic[i] = (bytes[i], bytes[i]);
        i += 1;
    }
    magic
}

const BZIP2_HEAD: [(u8, u8); 4] = [(b'B', b'B'), (b'Z', b'Z'), (b'h', b'h'), (b'1', b'9')];
const fn bzip2(block: [u8; 6]) -> [(u8, u8); 10] {
    let mut magic = [(0, 0); 10];
    let mut i = 0;
    while i < 10 {
        magic[i] = match i {
            0..4 => BZIP2_HEAD[i],
            _ => (block[i - 4], block[i - 4]),
        };
        i += 1;
    }
    magic
}

/// The magic numbers, and what each says.
const MAGICS: &[(Magic, Sniffed)] = &[
    // RFC 1952 §2.3.1: ID1, ID2.
    (&exactly([0x1f, 0x8b]), Sniffed::Compressed(Format::Gzip)),
    // RFC 8878 §3.1.1: a frame's magic number, little-endian.
    (
        &exactly([0x28, 0xb5, 0x2f, 0xfd]),
        Sniffed::Compressed(Format::Zstd),
    ),
    // RFC 8878 §3.1.2: a skippable frame, 0x184D2A5?.
    (
        &[(0x50, 0x5f), (0x2a, 0x2a), (0x4d, 0x4d), (0x18, 0x18)],
        Sniffed::Compressed(Format::Zstd),
    ),
    // bzip2: "BZh", the block size, then a block's magic (the digits of
    // pi) or, for an empty stream, the end-of-stream magic (of sqrt(pi)):
    // ten bytes, so that a line that happens to begin "BZh9" is a line.
    (
        &bzip2([0x31, 0x41, 0x59, 0x26, 0x53, 0x59]),
        Sniffed::Compressed(Format::Bzip2),
    ),
    (
        &bzip2([0x17, 0x72, 0x45, 0x38, 0x50, 0x90]),
        Sniffed::Compressed(Format::Bzip2),
    ),
    (
        &exactly([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0]),
        Sniffed::Unsupported("xz", "xz -dc"),
    ),
    (
        &exactly([0x04, 0x22, 0x4d, 0x18]),
        Sniffed::Unsupported("lz4", "lz4 -dc"),
    ),
];

/// What `prefix`, a stream's first bytes, says it is; `ended` when the
/// stream has no more (then a partial magic number is just bytes).
pub(crate) fn sniff(prefix: &[u8], ended: bool) -> Sniffed {
    let mut begins_one = false;
    for &(magic, says) in MAGICS {
        let compared = magic.len().min(prefix.len());
        let agrees = magic
            .iter()
            .zip(prefix)
            .all(|(&(low, high), &b)| (low..=high).contains(&b));
        if agrees && compared == magic.len() {
            return says;
        }
        begins_one |= agrees;
    }
    match begins_one && !ended {
        true => Sniffed::NeedMore,
        false => Sniffed::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_magic_numbers_not_lines() {
        use Sniffed::*;
        let cases: [(&[u8], bool, Sniffed); 13] = [
            (b"\x1f\x8b\x08\0", false, Compressed(Format::Gzip)),
            (b"\x28\xb5\x2f\xfd", false, Compressed(Format::Zstd)),
            (b"\x5a\x2a\x4d\x18", false, Compressed(Format::Zstd)),
            (b"BZh91AY&SY", false, Compressed(Format::Bzip2)),
            (
                b"BZh9\x17\x72\x45\x38\x50\x90",
                false,
                Compressed(Format::Bzip2),
            ),
            (b"\xfd7zXZ\0", false, Unsupported("xz", "xz -dc")),
            // A line that begins like a magic number is a line once it differs.
            (b"BZh9 is a line", false, Plain),
            (b"(\n", false, Plain),
            (b"http://a/\n", false, Plain),
            // Too few bytes to tell: more, unless the stream has no more.
            (b"BZh", false, NeedMore),
            (b"\x1f", false, NeedMore),
            (b"\x1f", true, Plain),
            (b"", true, Plain),
        ];
        for (bytes, ended, says) in cases {
            assert_eq!(sniff(bytes, ended), says, "{bytes:?}");
        }
    }
}
