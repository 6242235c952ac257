//! Compressing the output on several threads, as `pigz`, `bgzip` and
//! `pbzip2` do: the bytes are cut into blocks, each block compressed on
//! its own into a complete gzip member, zstd frame or bzip2 stream, and
//! the results written in order. Their concatenation is one valid file to
//! every reader of the format: a gzip file is a series of members (RFC
//! 1952, 2.2), a zstd file a series of frames (RFC 8878, 3), and bzip2
//! readers go on to the next stream.
//!
//! It knows bytes and formats, not lines.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc;

use super::format::Format;

/// Bytes compressed as one block of `format`. A block starts with an
/// empty history, so the larger the block beside the format's window, the
/// less the cut costs in size. gzip's window is 32 KiB: 1 MiB blocks cost
/// 0.2 %. zstd's at level 3 is 2 MiB or more: 1 MiB frames cost 6 %, 8 MiB
/// ones 0.6 % (measured on the benchmark corpus's output; what `zstd -T`
/// does, a job of 4 windows, is close to the latter). bzip2 compresses
/// 900 kB blocks on its own anyway.
fn block_bytes(format: Format) -> usize {
    match format {
        Format::Gzip | Format::Bzip2 => 1 << 20,
        Format::Zstd => 8 << 20,
    }
}

/// How an output is compressed: its format, level, and on how many threads.
///
/// ```
/// use urinorm::pipeline::Format;
/// use urinorm::pipeline::compress::Compression;
///
/// let gzip = Compression::new(Format::Gzip);
/// assert_eq!(gzip.level, 6);
/// assert_eq!(gzip.with_level(1).map(|c| c.level), Ok(1));
/// assert!(Compression::new(Format::Zstd).with_level(20).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compression {
    pub format: Format,
    pub level: u32,
    pub threads: usize,
}

impl Compression {
    /// `format` at its own default level, as its command-line tool uses
    /// it (`gzip -6`, `zstd -3`, `bzip2 -9`), so that a file is what a
    /// user of that tool expects; on one thread.
    pub fn new(format: Format) -> Compression {
        let level = match format {
            Format::Gzip => 6,
            Format::Zstd => 3,
            Format::Bzip2 => 9,
        };
        Compression {
            format,
            level,
            threads: 1,
        }
    }

    /// The same at `level`, if the format has it: gzip and bzip2 1 to 9,
    /// zstd 1 to 19 (as their tools take them without further flags).
    pub fn with_level(self, level: u32) -> Result<Compression, String> {
        let most = match self.format {
            Format::Gzip | Format::Bzip2 => 9,
            Format::Zstd => 19,
        };
        match (1..=most).contains(&level) {
            true => Ok(Compression { level, ..self }),
            false => Err(format!(
                "{} has levels 1 to {most}, not {level}",
                self.format.name()
            )),
        }
    }

    /// The same on `threads` threads.
    pub fn on_threads(self, threads: usize) -> Compression {
        Compression { threads, ..self }
    }
}

/// A block given to a compressing thread, and what it gives back: the
/// block's buffer (to be filled again) and its compressed bytes.
type Compressed = io::Result<(Vec<u8>, Vec<u8>)>;

/// A writer that compresses what is written to it as `compression` says,
/// block by block on threads of its own, into `inner`.
///
/// ```
/// use std::io::{Read, Write};
/// use urinorm::pipeline::Format;
/// use urinorm::pipeline::compress::{Compression, ParallelEncoder};
///
/// let gzip = Compression::new(Format::Gzip).on_threads(2);
/// let mut encoder = ParallelEncoder::new(Vec::new(), gzip)?;
/// encoder.write_all(b"http://example.com/\n")?;
/// let gzip = encoder.finish()?;
/// let mut text = String::new();
/// flate2::read::MultiGzDecoder::new(&gzip[..]).read_to_string(&mut text)?;
/// assert_eq!(text, "http://example.com/\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct ParallelEncoder<W: Write> {
    inner: W,
    compression: Compression,
    /// Its own threads: the run's pool may be busy or waiting on the writer.
    pool: rayon::ThreadPool,
    /// The block being filled, up to `block_bytes`.
    block: Vec<u8>,
    block_bytes: usize,
    /// Blocks being compressed, oldest first: their bytes are written in
    /// this order.
    in_flight: VecDeque<mpsc::Receiver<Compressed>>,
    /// At most this many blocks in flight: the memory is bounded.
    most_in_flight: usize,
    /// Buffers given back, reused rather than faulted in fresh.
    spare_blocks: Vec<Vec<u8>>,
    spare_outputs: Vec<Vec<u8>>,
    /// Whether any block was compressed: an empty output is still one
    /// (empty) member, as `gzip < /dev/null` writes.
    any_block: bool,
}

impl<W: Write> ParallelEncoder<W> {
    /// An encoder writing to `inner` as `compression` says.
    pub fn new(inner: W, compression: Compression) -> io::Result<ParallelEncoder<W>> {
        let threads = compression.threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("urinorm-compress-{i}"))
            // A panic drops the block's sender: the writer reports it as an
            // error instead of the process aborting.
            .panic_handler(drop)
            .build()
            .map_err(io::Error::other)?;
        let block_bytes = block_bytes(compression.format);
        Ok(ParallelEncoder {
            inner,
            compression,
            pool,
            block: Vec::with_capacity(block_bytes),
            block_bytes,
            in_flight: VecDeque::new(),
            most_in_flight: 2 * threads,
            spare_blocks: Vec::new(),
            spare_outputs: Vec::new(),
            any_block: false,
        })
    }

    /// Compresses what is left and writes every block; returns the writer
    /// under it.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.block.is_empty() || !self.any_block {
            self.send_block()?;
        }
        self.write_in_flight()?;
        Ok(self.inner)
    }

    /// Hands the block being filled to a compressing thread, first writing
    /// the oldest block if as many as allowed are in flight.
    fn send_block(&mut self) -> io::Result<()> {
        if self.in_flight.len() >= self.most_in_flight {
            self.write_oldest()?;
        }
        let fresh = self
            .spare_blocks
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.block_bytes));
        let block = std::mem::replace(&mut self.block, fresh);
        let output = self.spare_outputs.pop().unwrap_or_default();
        let compression = self.compression;
        let (sender, receiver) = mpsc::sync_channel(1);
        self.pool.spawn(move || {
            let compressed = compress(compression, &block, output).map(|output| (block, output));
            // The writer may have stopped on an error: the block just goes.
            let _ = sender.send(compressed);
        });
        self.in_flight.push_back(receiver);
        self.any_block = true;
        Ok(())
    }

    /// Waits for the oldest block in flight and writes its bytes.
    fn write_oldest(&mut self) -> io::Result<()> {
        let Some(receiver) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let (mut block, mut output) = receiver.recv().map_err(|_| {
            io::Error::other(format!(
                "a thread compressing the {} output stopped",
                self.compression.format.name()
            ))
        })??;
        self.inner.write_all(&output)?;
        block.clear();
        output.clear();
        self.spare_blocks.push(block);
        self.spare_outputs.push(output);
        Ok(())
    }

    fn write_in_flight(&mut self) -> io::Result<()> {
        while !self.in_flight.is_empty() {
            self.write_oldest()?;
        }
        Ok(())
    }
}

impl<W: Write> Write for ParallelEncoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let taken = buf.len().min(self.block_bytes - self.block.len());
        self.block.extend_from_slice(&buf[..taken]);
        if self.block.len() == self.block_bytes {
            self.send_block()?;
        }
        Ok(taken)
    }

    /// Ends the block being filled (a short one) and writes every block:
    /// what was written so far can be read from the file.
    fn flush(&mut self) -> io::Result<()> {
        if !self.block.is_empty() {
            self.send_block()?;
        }
        self.write_in_flight()?;
        self.inner.flush()
    }
}

/// `block` as one complete member, frame or stream, appended to `output`.
fn compress(compression: Compression, block: &[u8], output: Vec<u8>) -> io::Result<Vec<u8>> {
    let level = compression.level;
    match compression.format {
        Format::Gzip => {
            let level = flate2::Compression::new(level);
            let mut encoder = flate2::write::GzEncoder::new(output, level);
            encoder.write_all(block)?;
            encoder.finish()
        }
        Format::Zstd => {
            let mut encoder = zstd::stream::write::Encoder::new(output, level as i32)?;
            // A checksum in every frame, as the zstd tool writes: damage
            // is found when the file is read; and the frame's size, as the
            // tool writes it for a file.
            encoder.include_checksum(true)?;
            encoder.set_pledged_src_size(Some(block.len() as u64))?;
            encoder.write_all(block)?;
            encoder.finish()
        }
        Format::Bzip2 => {
            let level = bzip2::Compression::new(level);
            let mut encoder = bzip2::write::BzEncoder::new(output, level);
            encoder.write_all(block)?;
            encoder.finish()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn decompress(format: Format, bytes: &[u8]) -> Vec<u8> {
        let mut text = Vec::new();
        match format {
            Format::Gzip => flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut text),
            Format::Zstd => zstd::stream::read::Decoder::new(bytes)
                .unwrap()
                .read_to_end(&mut text),
            Format::Bzip2 => bzip2::read::MultiBzDecoder::new(bytes).read_to_end(&mut text),
        }
        .unwrap();
        text
    }

    /// Lines of several blocks' worth, written in pieces of awkward sizes.
    fn lines(count: usize) -> Vec<u8> {
        (0..count)
            .flat_map(|i| format!("http://example.com/{}/page?id={i}\n", i % 977).into_bytes())
            .collect()
    }

    #[test]
    fn every_format_reads_back_as_written_on_any_number_of_threads() {
        for format in [Format::Gzip, Format::Zstd, Format::Bzip2] {
            let text = lines(block_bytes(format) / 14);
            assert!(text.len() > 2 * block_bytes(format));
            for threads in [1, 3] {
                let compression = Compression::new(format).on_threads(threads);
                let mut encoder = ParallelEncoder::new(Vec::new(), compression).unwrap();
                for piece in text.chunks(65_537) {
                    encoder.write_all(piece).unwrap();
                }
                let bytes = encoder.finish().unwrap();
                assert!(
                    decompress(format, &bytes) == text,
                    "{format:?} on {threads}"
                );
            }
        }
    }

    #[test]
    fn nothing_written_is_one_empty_member() {
        for format in [Format::Gzip, Format::Zstd, Format::Bzip2] {
            let bytes = ParallelEncoder::new(Vec::new(), Compression::new(format).on_threads(2))
                .unwrap()
                .finish()
                .unwrap();
            assert!(!bytes.is_empty());
            assert!(decompress(format, &bytes).is_empty());
        }
    }

    #[test]
    fn a_flush_makes_what_was_written_readable() {
        let mut file = Vec::new();
        let gzip = Compression::new(Format::Gzip).on_threads(2);
        let mut encoder = ParallelEncoder::new(&mut file, gzip).unwrap();
        encoder.write_all(b"http://a.example/\n").unwrap();
        encoder.flush().unwrap();
        drop(encoder);
        assert_eq!(decompress(Format::Gzip, &file), b"http://a.example/\n");
    }

    /// A writer that fails after `room` bytes, as a full disk does.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::Error::from_raw_os_error(28));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_error_under_it_ends_the_writing() {
        let text = lines(400_000);
        let zstd = Compression::new(Format::Zstd).on_threads(2);
        let mut encoder = ParallelEncoder::new(Full { room: 100_000 }, zstd).unwrap();
        let written = text
            .chunks(4096)
            .try_for_each(|piece| encoder.write_all(piece))
            .and_then(|()| encoder.finish().map(drop));
        assert_eq!(written.unwrap_err().raw_os_error(), Some(28));
    }
}
