//! Opening inputs (files, stdin, gzip) and streaming them into the analyzer.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use batchlens_core::Analyzer;
use flate2::read::MultiGzDecoder;

use crate::progress::Progress;
use crate::Failure;

/// Large reads keep the per-call overhead negligible next to parsing.
const CHUNK: usize = 4 * 1024 * 1024;
/// Inputs smaller than this finish before a progress bar would help.
const PROGRESS_MIN_BYTES: u64 = 100 * 1024 * 1024;

pub fn read_all(
    files: &[PathBuf],
    analyzer: &mut Analyzer,
    show_progress: bool,
) -> Result<(), Failure> {
    if files.is_empty() || (files.len() == 1 && files[0].as_os_str() == "-") {
        let stdin = io::stdin().lock();
        return feed(
            BufReader::with_capacity(CHUNK, stdin),
            "stdin",
            None,
            analyzer,
            false,
        );
    }
    for path in files {
        if path.as_os_str() == "-" {
            let stdin = io::stdin().lock();
            feed(
                BufReader::with_capacity(CHUNK, stdin),
                "stdin",
                None,
                analyzer,
                false,
            )?;
            continue;
        }
        let (file, size) = open(path)?;
        feed(
            BufReader::with_capacity(CHUNK, file),
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
fn feed<R: BufRead>(
    mut r: R,
    name: &str,
    size: Option<u64>,
    analyzer: &mut Analyzer,
    progress: bool,
) -> Result<(), Failure> {
    let head = r.fill_buf().map_err(|e| read_error(name, &e))?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let mut bar = progress.then(|| Progress::new(name, size));
    if gz {
        let mut dec = MultiGzDecoder::new(CountingReader { inner: r, read: 0 });
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = match dec.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Failure::input(format!(
                        "'{name}' is not a valid gzip file: {e}."
                    )))
                }
            };
            analyzer.feed(&buf[..n]);
            if let Some(b) = bar.as_mut() {
                b.update(dec.get_ref().read);
            }
        }
    } else {
        let mut read = 0u64;
        loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(read_error(name, &e)),
            };
            if buf.is_empty() {
                break;
            }
            let n = buf.len();
            analyzer.feed(buf);
            r.consume(n);
            read += n as u64;
            if let Some(b) = bar.as_mut() {
                b.update(read);
            }
        }
    }
    if let Some(b) = bar {
        b.done();
    }
    Ok(())
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
