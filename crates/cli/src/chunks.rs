//! The input, cut in chunks of whole lines for the workers: read from a
//! stream, or mapped from a file no one writes ([`crate::mapping`]).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

use batchlens_core::Prepared;

use crate::mapping::{MappedFile, Window};
use crate::Failure;

/// Large reads keep the per-call overhead negligible next to parsing, and a
/// chunk with its records stays within a core's cache between the threads
/// (512 KiB measured a little faster than 1 or 2 MiB, and 256 KiB no faster);
/// with at most six in flight (`ordered.rs`) the memory stays a few MiB.
pub const CHUNK: usize = 512 * 1024;
/// The span of a file mapped at once ([`crate::mapping`]). The file's
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
    /// Input bytes consumed (compressed ones for gzip).
    fn consumed(&self) -> u64;
    /// The input was cut while it was read (a mapped file that shrank).
    fn cut(&self) -> bool {
        false
    }
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
    /// Its text is not the input's (the file was cut under its mapped window
    /// before it was read): not to be fed.
    pub skip: bool,
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
            skip: false,
        }
    }

    /// Its mapped window faulted: the file was cut under it.
    pub fn faulted(&self) -> bool {
        self.window.as_ref().is_some_and(|w| w.faulted())
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
        c.skip = false;
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

    fn consumed(&self) -> u64 {
        (self.consumed)(&self.src)
    }
}

/// A regular file no one writes ([`crate::mapping`]), handed out in chunks of
/// whole lines that lie in mapped windows. A file that shrinks is read no
/// further ([`Take::cut`]); one whose windows cannot be mapped is read on as a
/// stream.
pub struct Mapped<F> {
    file: Arc<MappedFile>,
    /// The window chunks are cut from, until one does not fit.
    window: Option<Arc<Window>>,
    /// The file's size when opened: what is read.
    size: u64,
    /// File offset of the next chunk.
    pos: u64,
    taken: u64,
    chunk: usize,
    window_len: usize,
    fail: F,
    /// The file shrank below the next chunk's end, or a window's pages went.
    cut: bool,
    /// After a window could not be mapped: the rest as a stream, from `pos`
    /// then, its chunks numbered after the mapped ones.
    rest: Option<(Source<CountingReader<File>, F>, u64, u64)>,
    failure: Option<Failure>,
}

impl<F: Fn(io::Error) -> Failure + Clone> Mapped<F> {
    /// The file, mapped in windows of `window_len` bytes cut in chunks of up
    /// to `chunk`; or the file back where it is not a plain regular file or
    /// someone has it open for writing.
    pub fn new(mut file: File, fail: F, chunk: usize, window_len: usize) -> Result<Self, File> {
        assert!(chunk > 0 && window_len >= chunk);
        let plain = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0)
            && !gzip_head(&mut file).unwrap_or(true);
        if !plain {
            return Err(file);
        }
        let file = MappedFile::open(file)?;
        let size = file.file().metadata().map_or(0, |m| m.len());
        Ok(Mapped {
            file,
            window: None,
            size,
            pos: 0,
            taken: 0,
            chunk,
            window_len,
            fail,
            cut: false,
            rest: None,
            failure: None,
        })
    }

    /// Maps no more: the rest is read as a stream.
    fn switch_to_stream(&mut self, c: &mut Chunk) -> Option<u64> {
        self.window = None;
        let file = self.file.file().try_clone().and_then(|mut f| {
            f.seek(SeekFrom::Start(self.pos))?;
            Ok(f)
        });
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
        if self.pos >= self.size || self.failure.is_some() || self.cut {
            return None;
        }
        let end = (self.pos + self.chunk as u64).min(self.size);
        if self.file.shrank(end) {
            // Its pages past the new end are gone: what is left to read is not
            // the file that was opened.
            self.cut = true;
            self.window = None;
            return None;
        }
        let window = match &self.window {
            Some(w) if end <= w.end() => Arc::clone(w),
            _ => {
                let len = (self.size - self.pos).min(self.window_len as u64) as usize;
                match self.file.map(self.pos, len) {
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
        c.skip = false;
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

    fn consumed(&self) -> u64 {
        match &self.rest {
            Some((source, from, _)) => from + source.consumed(),
            None => self.pos,
        }
    }

    fn cut(&self) -> bool {
        // A window may have faulted after the last chunk was handed out.
        self.cut || self.file.faulted()
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
    use std::time::Duration;

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
    fn mappable_dir() -> Option<tempfile::TempDir> {
        let dir = tempfile::tempdir().expect("temp dir");
        let granted = MappedFile::open(write(dir.path(), "probe", b"x\n")).is_ok();
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
        let Some(dir) = mappable_dir() else {
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
                panic!("seed {seed}: a file no one writes is mapped");
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
        let Some(dir) = mappable_dir() else {
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

    /// Someone truncates the file while chunks are in flight (as `logrotate`'s
    /// copytruncate does): the truncation does not wait for the reader, the
    /// chunks in flight still read (zeros where the file's pages went: no
    /// fault ends the process), and the source stops there, saying the file
    /// was cut.
    #[test]
    fn a_truncation_under_mapped_chunks_neither_waits_nor_faults() {
        let Some(dir) = mappable_dir() else {
            return;
        };
        let bytes = text(6, 200_000);
        let path = dir.path().join("rotated");
        let file = write(dir.path(), "rotated", &bytes);
        let Ok(mut m) = Mapped::new(file, fail, 1000, 65_536) else {
            panic!("a file no one writes is mapped");
        };
        // Chunks over several pages, the later ones wholly past the new end.
        let mut held = Vec::new();
        while held.iter().map(|c: &Chunk| c.len).sum::<usize>() < 20_000 {
            let mut c = Chunk::new();
            m.take(&mut c).expect("a chunk");
            held.push(c);
        }
        let (done, truncated) = std::sync::mpsc::channel();
        let rotate = std::thread::spawn(move || {
            let r = std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(&path)
                .and_then(|mut f| f.write_all(b"after the rotation\n"));
            let _ = done.send(());
            r
        });
        assert!(
            truncated.recv_timeout(Duration::from_secs(5)).is_ok(),
            "the truncation waited for the reader"
        );
        rotate.join().expect("join").expect("truncate");
        // Every byte of the chunks in flight reads; past the file's first page they are gone.
        let late = held.last().unwrap();
        assert!(late.read > 8192);
        assert!(
            late.text().iter().all(|&b| b == 0),
            "the pages past the end read as zeros"
        );
        let sum: u64 = held
            .iter()
            .flat_map(|c| c.text().iter().map(|&b| u64::from(b)))
            .sum();
        assert!(sum > 0, "the first page is the file's");
        assert!(m.cut(), "the fault is told");
        let mut next = Chunk::new();
        assert!(m.take(&mut next).is_none(), "nothing is read past the cut");
        assert!(m.failure().is_none());
    }

    /// A file that shrank before its next chunk is read no further (no fault needed).
    #[test]
    fn a_file_that_shrank_is_read_no_further() {
        let Some(dir) = mappable_dir() else {
            return;
        };
        let bytes = text(7, 100_000);
        let path = dir.path().join("shrinking");
        let file = write(dir.path(), "shrinking", &bytes);
        let Ok(mut m) = Mapped::new(file, fail, 1000, 4096) else {
            panic!("a file no one writes is mapped");
        };
        let mut first = Chunk::new();
        m.take(&mut first).expect("a chunk");
        let read = first.read;
        drop(first);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_len(50_000))
            .expect("truncate");
        let mut taken = 1;
        let mut c = Chunk::new();
        while m.take(&mut c).is_some() {
            taken += 1;
            assert!(c.read <= 50_000);
        }
        assert!(
            m.cut() && m.consumed() < 50_000 && m.consumed() >= read,
            "{taken} chunks"
        );
    }
}
