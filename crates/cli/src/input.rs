//! Opening inputs (files, stdin, gzip) and streaming them into the analyzer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use std::sync::mpsc;

use batchlens_core::{Analyzer, Prepared, ReadAhead};
use flate2::read::MultiGzDecoder;

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
/// Three threads: a reader reads (and decompresses) the input in chunks of
/// whole lines and reads the even chunks ahead ([`ReadAhead`]), a helper reads
/// the odd ones ahead, and this thread feeds the analyzer, which keeps log
/// order, taking chunks from the two in turn.
fn feed<R: BufRead + Send>(
    mut r: R,
    name: &str,
    size: Option<u64>,
    analyzer: &mut Analyzer,
    progress: bool,
) -> Result<(), Failure> {
    let head = r.fill_buf().map_err(|e| read_error(name, &e))?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let mut bar = progress.then(|| Progress::new(name, size));
    let opts = analyzer.options().clone();
    std::thread::scope(|scope| {
        // Two chunks waiting per channel: memory stays flat whatever the input's size.
        let (even_tx, even_rx) = mpsc::sync_channel::<Sent>(2);
        let (odd_tx, odd_rx) = mpsc::sync_channel::<Sent>(2);
        let (raw_tx, raw_rx) = mpsc::sync_channel::<Sent>(2);
        let (free_tx, free_rx) = mpsc::channel::<Chunk>();
        let mut odd_ahead = ReadAhead::new(&opts);
        scope.spawn(move || {
            for sent in raw_rx {
                let sent = sent.map(|mut c| {
                    let (text, prepared) = c.parts();
                    odd_ahead.read_into(text, prepared);
                    c
                });
                if odd_tx.send(sent).is_err() {
                    return;
                }
            }
        });
        let reader = Reader {
            ahead: ReadAhead::new(&opts),
            lanes: [even_tx, raw_tx],
            free: free_rx,
        };
        scope.spawn(move || {
            if gz {
                let dec = MultiGzDecoder::new(CountingReader { inner: r, read: 0 });
                reader.run(
                    dec,
                    |d| d.get_ref().read,
                    |e| Failure::input(format!("'{name}' is not a valid gzip file: {e}.")),
                )
            } else {
                let counted = CountingReader { inner: r, read: 0 };
                reader.run(counted, |c| c.read, |e| read_error(name, &e))
            }
        });
        let lanes = [even_rx, odd_rx];
        for k in 0.. {
            // A closed lane means the input ended (or a thread stopped after an error it sent).
            let Ok(sent) = lanes[k % 2].recv() else {
                break;
            };
            let mut chunk = sent?;
            let (text, prepared) = chunk.parts();
            analyzer.feed_prepared(text, prepared);
            if let Some(b) = bar.as_mut() {
                b.update(chunk.read);
            }
            let _ = free_tx.send(chunk);
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.done();
    }
    Ok(())
}

type Sent = Result<Chunk, Failure>;

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

struct Reader {
    ahead: ReadAhead,
    /// Even chunks go to the analyzer read ahead, odd ones to the helper raw.
    lanes: [mpsc::SyncSender<Sent>; 2],
    free: mpsc::Receiver<Chunk>,
}

impl Reader {
    /// Reads `src` into chunks cut after their last newline; stops at the end,
    /// after sending an error, or when the analyzer side is gone.
    fn run<S: Read>(
        mut self,
        mut src: S,
        consumed: impl Fn(&S) -> u64,
        fail: impl Fn(io::Error) -> Failure,
    ) {
        let mut carry: Vec<u8> = Vec::new();
        for k in 0usize.. {
            let lane = &self.lanes[k % 2];
            let mut c = self.free.try_recv().unwrap_or_else(|_| Chunk::new());
            c.bytes[..carry.len()].copy_from_slice(&carry);
            c.len = carry.len();
            carry.clear();
            let eof = match fill(&mut src, &mut c) {
                Ok(eof) => eof,
                Err(e) => {
                    let _ = lane.send(Err(fail(e)));
                    return;
                }
            };
            if !eof {
                if let Some(i) = memchr::memrchr(b'\n', c.text()) {
                    carry.extend_from_slice(&c.bytes[i + 1..c.len]);
                    c.len = i + 1;
                }
            }
            if c.len == 0 {
                return;
            }
            c.read = consumed(&src);
            if k % 2 == 0 {
                let (text, prepared) = c.parts();
                self.ahead.read_into(text, prepared);
            }
            if lane.send(Ok(c)).is_err() || eof {
                return;
            }
        }
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
