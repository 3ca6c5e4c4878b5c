//! Opening inputs (files, stdin, gzip) and streaming them into the analyzer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use std::sync::mpsc;

use batchlens_core::{Analyzer, Prepared, ReadAhead};
use flate2::read::MultiGzDecoder;

use crate::progress::Progress;
use crate::Failure;

/// Large reads keep the per-call overhead negligible next to parsing; with two
/// chunks in flight the memory stays a few MiB.
const CHUNK: usize = 2 * 1024 * 1024;
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
    for path in files {
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
/// A second thread reads (and decompresses) the input and reads its lines ahead
/// ([`ReadAhead`]) while this one feeds the analyzer, which keeps log order.
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
    let mut ahead = ReadAhead::new(analyzer.options());
    std::thread::scope(|scope| {
        // Few chunks in flight: memory stays flat whatever the input's size.
        let (full_tx, full_rx) = mpsc::sync_channel::<Result<Chunk, Failure>>(1);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        scope.spawn(move || {
            let result = if gz {
                let dec = MultiGzDecoder::new(CountingReader { inner: r, read: 0 });
                read_chunks(dec, |d| d.get_ref().read, &mut ahead, &full_tx, &free_rx)
                    .map_err(|e| Failure::input(format!("'{name}' is not a valid gzip file: {e}.")))
            } else {
                let counted = CountingReader { inner: r, read: 0 };
                read_chunks(counted, |c| c.read, &mut ahead, &full_tx, &free_rx)
                    .map_err(|e| read_error(name, &e))
            };
            if let Err(f) = result {
                let _ = full_tx.send(Err(f));
            }
        });
        for msg in full_rx {
            let chunk = msg?;
            analyzer.feed_prepared(&chunk.bytes, chunk.prepared);
            if let Some(b) = bar.as_mut() {
                b.update(chunk.read);
            }
            let _ = free_tx.send(chunk.bytes);
        }
        Ok(())
    })?;
    if let Some(b) = bar {
        b.done();
    }
    Ok(())
}

/// Whole lines of the input (the last chunk may end mid-line), read ahead.
struct Chunk {
    bytes: Vec<u8>,
    prepared: Prepared,
    /// Input bytes consumed so far (compressed ones for gzip), for the progress bar.
    read: u64,
}

/// Reads `src` into chunks cut after their last newline and sends them with
/// their reading ahead. Stops quietly when the receiver is gone.
fn read_chunks<S: Read>(
    mut src: S,
    consumed: impl Fn(&S) -> u64,
    ahead: &mut ReadAhead,
    out: &mpsc::SyncSender<Result<Chunk, Failure>>,
    free: &mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = free.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(&carry);
        carry.clear();
        let eof = fill(&mut src, &mut buf, CHUNK)?;
        if !eof {
            if let Some(i) = memchr::memrchr(b'\n', &buf) {
                carry.extend_from_slice(&buf[i + 1..]);
                buf.truncate(i + 1);
            }
        }
        if !buf.is_empty() {
            let chunk = Chunk {
                prepared: ahead.read(&buf),
                bytes: buf,
                read: consumed(&src),
            };
            if out.send(Ok(chunk)).is_err() {
                return Ok(());
            }
        }
        if eof {
            return Ok(());
        }
    }
}

/// Reads until `buf` holds `want` more bytes or the input ends; true at the end.
fn fill(src: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> io::Result<bool> {
    let target = buf.len() + want;
    while buf.len() < target {
        let from = buf.len();
        buf.resize(target, 0);
        match src.read(&mut buf[from..]) {
            Ok(0) => {
                buf.truncate(from);
                return Ok(true);
            }
            Ok(n) => buf.truncate(from + n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(from),
            Err(e) => {
                buf.truncate(from);
                return Err(e);
            }
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
