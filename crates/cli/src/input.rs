//! Opening inputs (files, stdin, gzip) and streaming them into the analyzer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use std::sync::Mutex;

use batchlens_core::{Analyzer, Prepared, ReadAhead};
use flate2::read::MultiGzDecoder;

use crate::ordered::{lock, Consume, Ordered};
use crate::progress::Progress;
use crate::Failure;

/// Large reads keep the per-call overhead negligible next to parsing, and a
/// chunk with its records stays within a core's cache between the threads
/// (512 KiB measured a little faster than 1 or 2 MiB, and 256 KiB no faster);
/// with two chunks in flight per channel the memory stays a few MiB.
const CHUNK: usize = 512 * 1024;
/// The buffer that shows the first bytes (gzip magic); larger reads pass it by.
const HEAD: usize = 64 * 1024;
/// Inputs smaller than this finish before a progress bar would help.
const PROGRESS_MIN_BYTES: u64 = 100 * 1024 * 1024;

pub fn read_all(
    files: &[PathBuf],
    analyzer: &mut Analyzer,
    show_progress: bool,
) -> Result<(), Failure> {
    if files.is_empty() || (files.len() == 1 && files[0].as_os_str() == "-") {
        let stdin = io::stdin();
        return feed(
            BufReader::with_capacity(HEAD, stdin),
            "stdin",
            None,
            analyzer,
            false,
        );
    }
    for (k, path) in files.iter().enumerate() {
        if k > 0 {
            // Each file's first bytes tell its own encoding.
            analyzer.next_input();
        }
        if path.as_os_str() == "-" {
            let stdin = io::stdin();
            feed(
                BufReader::with_capacity(HEAD, stdin),
                "stdin",
                None,
                analyzer,
                false,
            )?;
            continue;
        }
        let (file, size) = open(path)?;
        feed(
            BufReader::with_capacity(HEAD, file),
            &path.display().to_string(),
            Some(size),
            analyzer,
            show_progress && size >= PROGRESS_MIN_BYTES,
        )?;
    }
    Ok(())
}

fn open(path: &Path) -> Result<(File, u64), Failure> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| Failure::input(open_error(&shown.to_string(), &e)))?;
    if meta.is_dir() {
        return Err(Failure::input(format!(
            "'{shown}' is a directory; give the path of a log file."
        )));
    }
    let file = File::open(path).map_err(|e| Failure::input(open_error(&shown.to_string(), &e)))?;
    Ok((file, meta.len()))
}

fn open_error(shown: &str, e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => format!("'{shown}' does not exist."),
        io::ErrorKind::PermissionDenied => format!("'{shown}' cannot be read: permission denied."),
        _ => format!("'{shown}' cannot be read: {e}."),
    }
}

/// Feeds one input, decompressing it when it starts with the gzip magic bytes.
///
/// Two workers, one per core, each in turn take the next chunk of whole lines
/// from the input (one at a time), read it ahead ([`ReadAhead`]) and feed it to
/// the analyzer, which takes chunks in input order. A chunk's text and reading
/// stay on the core that read them (only the analyzer's state moves), and with
/// reading ahead the dearer part, the two rarely wait for each other.
fn feed<R: BufRead + Send>(
    mut r: R,
    name: &str,
    size: Option<u64>,
    analyzer: &mut Analyzer,
    progress: bool,
) -> Result<(), Failure> {
    let head = r.fill_buf().map_err(|e| read_error(name, &e))?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let bar = progress.then(|| Progress::new(name, size));
    let bar = if gz {
        let dec = MultiGzDecoder::new(CountingReader { inner: r, read: 0 });
        let source = Source::new(
            dec,
            |d: &MultiGzDecoder<_>| d.get_ref().read,
            |e| Failure::input(format!("'{name}' is not a valid gzip file: {e}.")),
        );
        run_workers(source, analyzer, bar)?
    } else {
        let counted = CountingReader { inner: r, read: 0 };
        let source = Source::new(
            counted,
            |c: &CountingReader<R>| c.read,
            |e| read_error(name, &e),
        );
        run_workers(source, analyzer, bar)?
    };
    if let Some(b) = bar {
        b.done();
    }
    Ok(())
}

/// The analyzer's side, shared by the workers.
struct Feeding<'a> {
    analyzer: &'a mut Analyzer,
    bar: Option<Progress>,
}

fn run_workers<S: Read + Send, F: Fn(io::Error) -> Failure + Send>(
    source: Source<S, F>,
    analyzer: &mut Analyzer,
    bar: Option<Progress>,
) -> Result<Option<Progress>, Failure> {
    let opts = analyzer.options().clone();
    let source = Mutex::new(source);
    // Chunks are numbered as they are taken, and fed in that order.
    let ordered = Ordered::new(Feeding { analyzer, bar });
    let feed = |f: &mut Feeding<'_>, mut c: Chunk| {
        let (text, prepared) = c.parts();
        f.analyzer.feed_prepared(text, prepared);
        if let Some(b) = f.bar.as_mut() {
            b.update(c.read);
        }
        c
    };
    std::thread::scope(|scope| {
        let worker = || {
            let mut ahead = ReadAhead::new(&opts);
            let _guard = AbandonGuard(&ordered);
            loop {
                let mut chunk = ordered.spare().unwrap_or_else(Chunk::new);
                let Some(k) = lock(&source).take(&mut chunk) else {
                    // The other worker feeds what it still reads.
                    ordered.consume(Consume::Blocking, feed);
                    return;
                };
                let (text, prepared) = chunk.parts();
                ahead.read_into(text, prepared);
                let how = ordered.put(k, chunk);
                if !ordered.consume(how, feed) {
                    return;
                }
            }
        };
        let other = scope.spawn(worker);
        worker();
        if let Err(p) = other.join() {
            std::panic::resume_unwind(p);
        }
    });
    let source = source.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = source.failure {
        return Err(e);
    }
    Ok(ordered.into_state().bar)
}

/// Wakes the other worker when this one unwinds, so it does not wait for a
/// chunk that will never come.
struct AbandonGuard<'g, 'a>(&'g Ordered<Chunk, Feeding<'a>>);

impl Drop for AbandonGuard<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abandon();
        }
    }
}

/// Whole lines of the input (the last chunk may end mid-line), read ahead.
struct Chunk {
    /// Allocated once at full size; `len` bytes hold text.
    bytes: Vec<u8>,
    len: usize,
    prepared: Prepared,
    /// Input bytes consumed so far (compressed ones for gzip), for the progress bar.
    read: u64,
}

impl Chunk {
    fn new() -> Self {
        Chunk {
            // A carried line of up to CHUNK bytes plus CHUNK new ones.
            bytes: vec![0; 2 * CHUNK],
            len: 0,
            prepared: Prepared::default(),
            read: 0,
        }
    }

    fn text(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The text and its reading, borrowed apart.
    fn parts(&mut self) -> (&[u8], &mut Prepared) {
        (&self.bytes[..self.len], &mut self.prepared)
    }
}

/// The input, handed out in chunks cut after their last newline.
struct Source<S, F> {
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
    fn new(src: S, consumed: fn(&S) -> u64, fail: F) -> Self {
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

    /// Fills `c` with the next chunk; its number, or `None` at the end or after
    /// a failure (kept in `failure`).
    fn take(&mut self, c: &mut Chunk) -> Option<u64> {
        if self.ended {
            return None;
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

fn read_error(name: &str, e: &io::Error) -> Failure {
    match e.kind() {
        io::ErrorKind::IsADirectory => Failure::input(format!(
            "'{name}' is a directory; give the path of a log file."
        )),
        _ => Failure::input(format!("reading '{name}' failed: {e}.")),
    }
}

/// Counts compressed bytes consumed, for the progress bar of a .gz input.
struct CountingReader<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}
