//! The input, cut in chunks of whole lines for the workers: read from a
//! stream, or mapped from a leased file ([`crate::lease`]).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use batchlens_core::Prepared;

use crate::lease::{Lease, Window};
use crate::Failure;

/// Large reads keep the per-call overhead negligible next to parsing, and a
/// chunk with its records stays within a core's cache between the threads
/// (512 KiB measured a little faster than 1 or 2 MiB, and 256 KiB no faster);
/// with at most six in flight (`ordered.rs`) the memory stays a few MiB.
pub const CHUNK: usize = 512 * 1024;
/// The span of a leased file mapped at once ([`crate::lease`]). The file's
/// pages a window maps count in the process' resident memory, so windows are
/// small: the chunks in flight lie in at most two (and 8 MiB maps in a few
/// calls per second of reading).
pub const WINDOW: usize = 8 * 1024 * 1024;

/// Hands out an input in chunks of whole lines, numbered in input order.
pub trait Take {
    /// Fills `c` with the next chunk: its number, or `None` at the end or
    /// after a failure (told by [`Take::failure`]).
    fn take(&mut self, c: &mut Chunk) -> Option<u64>;
    fn failure(self) -> Option<Failure>;
}

/// Whole lines of the input (a chunk ends mid-line only at the end of the
/// input or inside a line longer than a chunk), read ahead.
pub struct Chunk {
    /// Text read from a stream; allocated at full size by the first read.
    bytes: Vec<u8>,
    /// The mapped window that holds the text instead.
    window: Option<Arc<Window>>,
    /// Where the text starts in the window (in `bytes`, at 0).
    from: usize,
    len: usize,
    prepared: Prepared,
    /// Input bytes consumed so far (compressed ones for gzip), for the progress bar.
    pub read: u64,
}

impl Chunk {
    pub fn new() -> Self {
        Chunk {
            bytes: Vec::new(),
            window: None,
            from: 0,
            len: 0,
            prepared: Prepared::default(),
            read: 0,
        }
    }

    fn text(&self) -> &[u8] {
        text_of(&self.window, &self.bytes, self.from, self.len)
    }

    /// Lets go of the mapped window, if any: mapped pages count as the
    /// process' memory until unmapped.
    pub fn unmap(&mut self) {
        self.window = None;
    }

    /// The text and its reading, borrowed apart.
    pub fn parts(&mut self) -> (&[u8], &mut Prepared) {
        let text = text_of(&self.window, &self.bytes, self.from, self.len);
        (text, &mut self.prepared)
    }
}

/// A chunk's text: in its window when mapped, else in its buffer.
fn text_of<'a>(
    window: &'a Option<Arc<Window>>,
    bytes: &'a [u8],
    from: usize,
    len: usize,
) -> &'a [u8] {
    match window {
        Some(w) => &w.bytes()[from..from + len],
        None => &bytes[from..from + len],
    }
}

/// The input, handed out in chunks cut after their last newline.
pub struct Source<S, F> {
    src: S,
    consumed: fn(&S) -> u64,
    fail: F,
    /// The text after the last chunk's last newline: the next chunk starts with it.
    carry: Vec<u8>,
    /// Chunks handed out.
    taken: u64,
    ended: bool,
    failure: Option<Failure>,
}

impl<S: Read, F: Fn(io::Error) -> Failure> Source<S, F> {
    pub fn new(src: S, consumed: fn(&S) -> u64, fail: F) -> Self {
        Source {
            src,
            consumed,
            fail,
            carry: Vec::new(),
            taken: 0,
            ended: false,
            failure: None,
        }
    }
}

impl<S: Read, F: Fn(io::Error) -> Failure> Take for Source<S, F> {
    fn take(&mut self, c: &mut Chunk) -> Option<u64> {
        if self.ended {
            return None;
        }
        c.window = None;
        c.from = 0;
        if c.bytes.is_empty() {
            // A carried line of up to CHUNK bytes plus CHUNK new ones.
            c.bytes = vec![0; 2 * CHUNK];
        }
        c.bytes[..self.carry.len()].copy_from_slice(&self.carry);
        c.len = self.carry.len();
        self.carry.clear();
        let eof = match fill(&mut self.src, c) {
            Ok(eof) => eof,
            Err(e) => {
                self.ended = true;
                self.failure = Some((self.fail)(e));
                return None;
            }
        };
        self.ended = eof;
        if !eof {
            if let Some(i) = memchr::memrchr(b'\n', c.text()) {
                self.carry.extend_from_slice(&c.bytes[i + 1..c.len]);
                c.len = i + 1;
            }
        }
        if c.len == 0 {
            self.ended = true;
            return None;
        }
        c.read = (self.consumed)(&self.src);
        self.taken += 1;
        Some(self.taken - 1)
    }

    fn failure(self) -> Option<Failure> {
        self.failure
    }
}

/// A leased regular file ([`crate::lease`]), handed out in chunks of whole
/// lines that lie in mapped windows; if the lease breaks (someone waits to
/// write or truncate it), read as a stream from there on.
pub struct Mapped<F> {
    lease: Option<Arc<Lease>>,
    /// The window chunks are cut from, until one does not fit.
    window: Option<Arc<Window>>,
    size: u64,
    /// File offset of the next chunk.
    pos: u64,
    taken: u64,
    chunk: usize,
    window_len: usize,
    fail: F,
    /// After a break: the rest as a stream, from `pos` then, its chunks
    /// numbered after the mapped ones.
    rest: Option<(Source<CountingReader<File>, F>, u64, u64)>,
    failure: Option<Failure>,
}

impl<F: Fn(io::Error) -> Failure + Clone> Mapped<F> {
    /// The file, mapped in windows of `window_len` bytes cut in chunks of up
    /// to `chunk`; or the file back where it is not a plain regular file or no
    /// lease is granted.
    pub fn new(mut file: File, fail: F, chunk: usize, window_len: usize) -> Result<Self, File> {
        assert!(chunk > 0 && window_len >= chunk);
        let plain = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0)
            && !gzip_head(&mut file).unwrap_or(true);
        if !plain {
            return Err(file);
        }
        let lease = Lease::take(file)?;
        // Taken under the lease, the size is one no one can change.
        let size = lease.file().metadata().map_or(0, |m| m.len());
        Ok(Mapped {
            lease: Some(lease),
            window: None,
            size,
            pos: 0,
            taken: 0,
            chunk,
            window_len,
            fail,
            rest: None,
            failure: None,
        })
    }

    /// Maps no more: the windows in flight are the last to hold the lease,
    /// and the rest is read as a stream.
    fn switch_to_stream(&mut self, c: &mut Chunk) -> Option<u64> {
        self.window = None;
        let lease = self.lease.take()?;
        let file = lease.file().try_clone().and_then(|mut f| {
            f.seek(SeekFrom::Start(self.pos))?;
            Ok(f)
        });
        drop(lease);
        match file {
            Ok(f) => {
                let counted = CountingReader::new(f);
                let source = Source::new(counted, |r| r.read, self.fail.clone());
                self.rest = Some((source, self.pos, self.taken));
                self.take(c)
            }
            Err(e) => {
                self.failure = Some((self.fail)(e));
                None
            }
        }
    }
}

impl<F: Fn(io::Error) -> Failure + Clone> Take for Mapped<F> {
    fn take(&mut self, c: &mut Chunk) -> Option<u64> {
        if let Some((source, from, base)) = self.rest.as_mut() {
            let k = source.take(c)?;
            c.read += *from;
            return Some(*base + k);
        }
        if self.pos >= self.size || self.failure.is_some() {
            return None;
        }
        let lease = self.lease.as_ref()?;
        if lease.broken() {
            return self.switch_to_stream(c);
        }
        let end = (self.pos + self.chunk as u64).min(self.size);
        let window = match &self.window {
            Some(w) if end <= w.end() => Arc::clone(w),
            _ => {
                let len = (self.size - self.pos).min(self.window_len as u64) as usize;
                match lease.map(self.pos, len) {
                    Ok(w) => Arc::clone(self.window.insert(Arc::new(w))),
                    // A file system that cannot map still reads.
                    Err(_) => return self.switch_to_stream(c),
                }
            }
        };
        let from = (self.pos - window.at()) as usize;
        let text = &window.bytes()[from..(end - window.at()) as usize];
        let len = if end < self.size {
            memchr::memrchr(b'\n', text).map_or(text.len(), |i| i + 1)
        } else {
            text.len()
        };
        c.window = Some(window);
        c.from = from;
        c.len = len;
        self.pos += len as u64;
        c.read = self.pos;
        self.taken += 1;
        Some(self.taken - 1)
    }

    fn failure(self) -> Option<Failure> {
        self.failure
            .or_else(|| self.rest.and_then(|(source, _, _)| source.failure))
    }
}

/// Whether a file starts with the gzip magic bytes; the file is left at its start.
fn gzip_head(file: &mut File) -> io::Result<bool> {
    let mut head = [0u8; 2];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(head == [0x1f, 0x8b])
}

/// Reads until the chunk holds CHUNK bytes more than it did, or the input
/// ends; true at the end.
fn fill(src: &mut impl Read, c: &mut Chunk) -> io::Result<bool> {
    let target = c.len + CHUNK;
    while c.len < target {
        match src.read(&mut c.bytes[c.len..target]) {
            Ok(0) => return Ok(true),
            Ok(n) => c.len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

/// Counts the bytes a reader consumed (compressed ones for .gz), for the progress bar.
pub struct CountingReader<R> {
    inner: R,
    pub read: u64,
}

impl<R> CountingReader<R> {
    pub fn new(inner: R) -> Self {
        CountingReader { inner, read: 0 }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    fn fail(e: io::Error) -> Failure {
        Failure::input(format!("test read failed: {e}"))
    }

    /// Lines of many lengths (some longer than a chunk), the last unfinished.
    fn text(seed: u64, total: usize) -> Vec<u8> {
        let mut rng = batchlens_sim::rng::Rng::new(seed);
        let mut out = Vec::new();
        while out.len() < total {
            let x = rng.next_u64();
            let len = if x % 29 == 0 {
                2500 + x % 3000
            } else {
                x % 300
            };
            out.extend((0..len).map(|k| b'a' + ((k + x) % 26) as u8));
            out.push(b'\n');
        }
        out.extend_from_slice(b"no newline at the end");
        out
    }

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> File {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write the test file");
        File::open(path).expect("open the test file")
    }

    /// A temporary directory where leases are granted (a file system with
    /// leases, a file we own); where not, nothing is mapped, and the tests of
    /// the mapped path say so and stop.
    fn leased_dir() -> Option<tempfile::TempDir> {
        let dir = tempfile::tempdir().expect("temp dir");
        let granted = Lease::take(write(dir.path(), "probe", b"x\n")).is_ok();
        if !granted {
            eprintln!(
                "no read lease granted in {}: mapped reading untested here",
                dir.path().display()
            );
        }
        granted.then_some(dir)
    }

    fn take_all(src: &mut impl Take) -> Vec<Chunk> {
        let mut out = Vec::new();
        loop {
            let mut c = Chunk::new();
            let Some(k) = src.take(&mut c) else {
                return out;
            };
            assert_eq!(k, out.len() as u64, "chunks are numbered in order");
            out.push(c);
        }
    }

    #[test]
    fn mapped_chunks_hold_the_file_in_whole_lines() {
        let Some(dir) = leased_dir() else {
            return;
        };
        for (seed, chunk, window) in [
            (1, 1000, 1000),
            (2, 1000, 4096),
            (3, 4096, 10_000),
            (4, 700, 65_536),
        ] {
            let bytes = text(seed, 200_000);
            let file = write(dir.path(), "log", &bytes);
            let Ok(mut m) = Mapped::new(file, fail, chunk, window) else {
                panic!("seed {seed}: a leased file is mapped");
            };
            let chunks = take_all(&mut m);
            assert!(m.failure().is_none());
            let mut joined = Vec::new();
            for (k, c) in chunks.iter().enumerate() {
                let t = c.text();
                assert!(c.window.is_some(), "seed {seed}: chunk {k} is mapped");
                assert!(!t.is_empty() && t.len() <= chunk, "seed {seed}: chunk {k}");
                let last = k + 1 == chunks.len();
                // Cut after a newline, unless a line fills the whole chunk.
                assert!(
                    last || t.ends_with(b"\n") || !t.contains(&b'\n') && t.len() == chunk,
                    "seed {seed}: chunk {k} ends mid-line"
                );
                joined.extend_from_slice(t);
                assert_eq!(
                    c.read,
                    joined.len() as u64,
                    "seed {seed}: progress of chunk {k}"
                );
            }
            assert!(joined == bytes, "seed {seed}: the chunks are the file");
            // Windows are small: no chunk's window is much longer than asked.
            assert!(chunks
                .iter()
                .all(|c| c.window.as_ref().unwrap().bytes().len() <= window));
        }
    }

    #[test]
    fn a_file_someone_writes_is_not_mapped_and_neither_is_gzip_nor_an_empty_file() {
        let Some(dir) = leased_dir() else {
            return;
        };
        let bytes = text(5, 10_000);
        let file = write(dir.path(), "live", &bytes);
        let writer = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("live"))
            .expect("open for writing");
        let Err(file) = Mapped::new(file, fail, 1000, 4096) else {
            panic!("a file open for writing is mapped");
        };
        drop(writer);
        assert!(
            Mapped::new(file, fail, 1000, 4096).is_ok(),
            "no writer left: mapped"
        );

        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        let mut file = write(dir.path(), "log.gz", &gz);
        assert!(gzip_head(&mut file).expect("read the head"));
        let Err(mut file) = Mapped::new(file, fail, 1000, 4096) else {
            panic!("a gzip file is mapped");
        };
        let mut head = [0u8; 2];
        file.read_exact(&mut head).expect("read");
        assert_eq!(head, [0x1f, 0x8b], "the file is handed back at its start");

        assert!(Mapped::new(write(dir.path(), "empty", b""), fail, 1000, 4096).is_err());
    }

    /// Someone opens the file to truncate it while chunks are in flight: the
    /// reader maps no more and reads on as a stream, and the truncation waits
    /// until the last mapped chunk is let go (else its pages would be gone).
    #[test]
    fn a_truncation_waits_for_the_mapped_chunks_and_the_rest_is_read_as_a_stream() {
        let Some(dir) = leased_dir() else {
            return;
        };
        let bytes = text(6, 100_000);
        let path = dir.path().join("rotated");
        let file = write(dir.path(), "rotated", &bytes);
        let Ok(mut m) = Mapped::new(file, fail, 1000, 4096) else {
            panic!("a leased file is mapped");
        };
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut c = Chunk::new();
            m.take(&mut c).expect("a chunk");
            held.push(c);
        }
        let truncated = AtomicBool::new(false);
        std::thread::scope(|s| {
            let rotate = s.spawn(|| {
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&path)
                    .expect("open to truncate");
                truncated.store(true, Ordering::SeqCst);
                f.write_all(b"after the rotation\n").expect("write");
            });
            let start = Instant::now();
            while !m.lease.as_ref().is_some_and(|l| l.broken()) {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "the lease never broke"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut next = Chunk::new();
            m.take(&mut next).expect("the next chunk, read");
            assert!(next.window.is_none(), "read as a stream after the break");
            assert!(
                m.lease.is_none() && m.window.is_none(),
                "the source maps no more"
            );
            let at = held.iter().map(|c| c.len).sum::<usize>();
            assert!(
                next.text() == &bytes[at..at + next.len],
                "the stream goes on where the map stopped"
            );
            assert_eq!(next.read, (at + next.len) as u64);
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                !truncated.load(Ordering::SeqCst),
                "truncated under mapped chunks"
            );
            for c in &held {
                assert!(c.text() == &bytes[..at][c.read as usize - c.len..c.read as usize]);
            }
            drop(held);
            rotate
                .join()
                .expect("the truncation went through once the chunks were let go");
        });
        assert!(truncated.load(Ordering::SeqCst));
        // The rest reads from the truncated file, without a fault.
        take_all(&mut m);
        assert!(m.failure().is_none());
    }
}
