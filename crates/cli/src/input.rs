//! Opening inputs (files, stdin, gzip) and streaming them into the analyzer.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use batchlens_core::report::Truncation;
use batchlens_core::{Analyzer, ReadAhead};
use flate2::read::MultiGzDecoder;

use crate::chunks::{Chunk, CountingReader, Mapped, Source, Take, CHUNK, WINDOW};
use crate::ordered::{lock, Consume, Ordered};
use crate::progress::Progress;
use crate::Failure;

/// The buffer that shows the first bytes (gzip magic); larger reads pass it by.
const HEAD: usize = 64 * 1024;
/// Inputs smaller than this finish before a progress bar would help.
const PROGRESS_MIN_BYTES: u64 = 100 * 1024 * 1024;
/// Text an input may hold before it must show itself a log: past it, an input
/// whose first bytes are binary and that holds no stats line is read no
/// further (`/dev/zero`, `/dev/urandom` and a large binary file would be read
/// to their end, or forever).
pub const BINARY_CUTOFF: u64 = 4 * 1024 * 1024;
/// The first bytes of an input judged text or binary, as the analyzer judges them.
const SNIFF: usize = 64 * 1024;

/// Feeds every input to the analyzer, in order; a file that shrank while it
/// was read (the first, if several did) is told.
pub fn read_all(
    files: &[PathBuf],
    analyzer: &mut Analyzer,
    show_progress: bool,
) -> Result<Option<Truncation>, Failure> {
    if files.is_empty() || (files.len() == 1 && files[0].as_os_str() == "-") {
        let stdin = io::stdin();
        feed(
            BufReader::with_capacity(HEAD, stdin),
            "stdin",
            None,
            analyzer,
            false,
        )?;
        return Ok(None);
    }
    let mut truncated = None;
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
        let name = path.display().to_string();
        let progress = show_progress && size >= PROGRESS_MIN_BYTES;
        // Looked at after the end: a file that is shorter than what was read,
        // or than it was when opened, was cut while it was read.
        let later = file.try_clone().ok();
        let read = match Mapped::new(file, |e| read_error(&name, &e), CHUNK, WINDOW) {
            Ok(mapped) => {
                let bar = progress.then(|| Progress::new(&name, Some(size)));
                let fed = run_workers(mapped, analyzer, bar, &name)?;
                if let Some(b) = fed.bar {
                    b.done();
                }
                (fed.consumed, fed.cut)
            }
            Err(file) => feed(
                BufReader::with_capacity(HEAD, file),
                &name,
                Some(size),
                analyzer,
                progress,
            )?,
        };
        let (consumed, cut) = read;
        let now = later.and_then(|f| f.metadata().ok()).map(|m| m.len());
        let shrank = cut || consumed < size || now.is_some_and(|n| n < consumed);
        if shrank && truncated.is_none() {
            truncated = Some(Truncation {
                file: name,
                bytes_read: consumed,
                bytes_at_open: size,
            });
        }
    }
    Ok(truncated)
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
/// Returns the input bytes consumed and whether the input was cut.
fn feed<R: BufRead + Send>(
    mut r: R,
    name: &str,
    size: Option<u64>,
    analyzer: &mut Analyzer,
    progress: bool,
) -> Result<(u64, bool), Failure> {
    let head = r.fill_buf().map_err(|e| read_error(name, &e))?;
    let gz = head.starts_with(&[0x1f, 0x8b]);
    let bar = progress.then(|| Progress::new(name, size));
    let fed = if gz {
        let dec = MultiGzDecoder::new(CountingReader::new(r));
        let source = Source::new(
            dec,
            |d: &MultiGzDecoder<_>| d.get_ref().read,
            |e| Failure::input(format!("'{name}' is not a valid gzip file: {e}.")),
        );
        run_workers(source, analyzer, bar, name)?
    } else {
        let counted = CountingReader::new(r);
        let source = Source::new(
            counted,
            |c: &CountingReader<R>| c.read,
            |e| read_error(name, &e),
        );
        run_workers(source, analyzer, bar, name)?
    };
    if let Some(b) = fed.bar {
        b.done();
    }
    Ok((fed.consumed, fed.cut))
}

/// What feeding one input left.
struct Fed {
    bar: Option<Progress>,
    /// Input bytes consumed.
    consumed: u64,
    /// The input was cut while it was read.
    cut: bool,
}

/// The analyzer's side, shared by the workers.
struct Feeding<'a> {
    analyzer: &'a mut Analyzer,
    bar: Option<Progress>,
    judge: Judge,
    /// Input bytes consumed up to the end of the last chunk fed.
    fed_to: u64,
    /// A chunk was not the input's (see [`Chunk::skip`]): none after it is fed.
    skipping: bool,
}

/// Whether an input shows itself a log within its first [`BINARY_CUTOFF`]
/// bytes: its first [`SNIFF`] bytes are text, or it holds a stats line.
struct Judge {
    /// The analyzer's bytes and stats lines when the input began.
    bytes_at_start: u64,
    stats_at_start: u64,
    sniffed: usize,
    odd: usize,
    /// NUL bytes at even and at odd offsets: UTF-16 text has them at one of the
    /// two (the analyzer decodes it; its raw bytes are no binary).
    nul: [usize; 2],
    /// The input starts with a UTF-16 byte-order mark.
    mark: bool,
    decided: bool,
}

impl Judge {
    fn new(a: &Analyzer) -> Self {
        Judge {
            bytes_at_start: a.bytes(),
            stats_at_start: a.stat_lines(),
            sniffed: 0,
            odd: 0,
            nul: [0, 0],
            mark: false,
            decided: false,
        }
    }

    /// Looks at a chunk just fed (the decoded text's first bytes are the
    /// raw ones for plain text and gzip alike); true when the input is to be
    /// read no further.
    fn binary_without_stats(&mut self, text: &[u8], a: &Analyzer) -> bool {
        if self.decided {
            return false;
        }
        if self.sniffed < SNIFF {
            if self.sniffed == 0 {
                self.mark = matches!(text, [0xff, 0xfe, ..] | [0xfe, 0xff, ..]);
            }
            let head = &text[..text.len().min(SNIFF - self.sniffed)];
            for (i, &c) in head.iter().enumerate() {
                // The analyzer's own rule for binary bytes.
                if c == 0 || (c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x1b | 0x0c)) {
                    self.odd += 1;
                }
                if c == 0 {
                    self.nul[(self.sniffed + i) % 2] += 1;
                }
            }
            self.sniffed += head.len();
        }
        if a.bytes() - self.bytes_at_start < BINARY_CUTOFF {
            return false;
        }
        self.decided = true;
        let (few, many) = (self.nul[0].min(self.nul[1]), self.nul[0].max(self.nul[1]));
        let utf16 = self.mark || (many * 4 > self.sniffed && few * 40 < self.sniffed);
        !utf16 && self.odd * 100 > self.sniffed && a.stat_lines() == self.stats_at_start
    }
}

fn run_workers<S: Take + Send>(
    source: S,
    analyzer: &mut Analyzer,
    bar: Option<Progress>,
    name: &str,
) -> Result<Fed, Failure> {
    let opts = analyzer.options().clone();
    let source = Mutex::new(source);
    let judge = Judge::new(analyzer);
    // Set when the input is read no further (see `Judge`).
    let binary = AtomicBool::new(false);
    // Chunks are numbered as they are taken, and fed in that order.
    let ordered = Ordered::new(Feeding {
        analyzer,
        bar,
        judge,
        fed_to: 0,
        skipping: false,
    });
    let feed = |f: &mut Feeding<'_>, mut c: Chunk| {
        f.skipping |= c.skip;
        if f.skipping {
            c.unmap();
            return c;
        }
        f.fed_to = c.read;
        let (text, prepared) = c.parts();
        f.analyzer.feed_prepared(text, prepared);
        if f.judge.binary_without_stats(text, f.analyzer) {
            binary.store(true, Ordering::Relaxed);
        }
        if let Some(b) = f.bar.as_mut() {
            b.update(c.read);
        }
        c.unmap();
        c
    };
    std::thread::scope(|scope| {
        let worker = || {
            let mut ahead = ReadAhead::new(&opts);
            let _guard = AbandonGuard(&ordered);
            loop {
                let mut chunk = ordered.spare().unwrap_or_else(Chunk::new);
                let taken = if binary.load(Ordering::Relaxed) {
                    None
                } else {
                    lock(&source).take(&mut chunk)
                };
                let Some(k) = taken else {
                    // The other worker feeds what it still reads.
                    ordered.consume(Consume::Blocking, feed);
                    return;
                };
                let (text, prepared) = chunk.parts();
                ahead.read_into(text, prepared);
                // Read (every byte) before this look: zeros read after a fault are skipped.
                chunk.skip = chunk.faulted();
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
    if binary.load(Ordering::Relaxed) {
        let what = if name == "stdin" {
            "stdin".to_string()
        } else {
            format!("'{name}'")
        };
        return Err(Failure::input(format!(
            "{what} is not a text log: its first {} MiB are binary data without a stats line, so it was read no further; give a server log file (plain text or .gz).",
            BINARY_CUTOFF >> 20
        )));
    }
    let cut = source.cut();
    let consumed = source.consumed();
    if let Some(e) = source.failure() {
        return Err(e);
    }
    let fed = ordered.into_state();
    Ok(Fed {
        bar: fed.bar,
        // What a cut input was read of: up to the last chunk fed.
        consumed: if cut || fed.skipping {
            fed.fed_to
        } else {
            consumed
        },
        cut: cut || fed.skipping,
    })
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

fn read_error(name: &str, e: &io::Error) -> Failure {
    match e.kind() {
        io::ErrorKind::IsADirectory => Failure::input(format!(
            "'{name}' is a directory; give the path of a log file."
        )),
        _ => Failure::input(format!("reading '{name}' failed: {e}.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlens_core::Options;

    fn report(source: impl Take + Send) -> String {
        let mut analyzer = Analyzer::new(Options::default());
        if let Err(e) = run_workers(source, &mut analyzer, None, "test") {
            panic!("read: {}", e.message);
        }
        serde_json::to_string(&analyzer.finish()).expect("json")
    }

    /// The bundled logs, mapped in small windows and chunks (so many lines
    /// straddle them) through both workers, report as when read as a stream.
    #[test]
    fn a_mapped_log_reports_as_the_stream_of_it_does() {
        let dir = tempfile::tempdir().expect("temp dir");
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut mapped = 0;
        for name in [
            "sglang-kv-bound.log",
            "sglang-retractions.log",
            "vllm-kv-bound.log",
        ] {
            let path = dir.path().join(name);
            std::fs::copy(examples.join(name), &path).expect("copy the example");
            let fail = |e| read_error(name, &e);
            let stream = report(Source::new(
                CountingReader::new(File::open(&path).expect("open")),
                |c| c.read,
                fail,
            ));
            for (chunk, window) in [(3000, 8192), (65_536, 200_000)] {
                let file = File::open(&path).expect("open");
                let Ok(m) = Mapped::new(file, fail, chunk, window) else {
                    eprintln!(
                        "no read lease granted in {}: mapped reading untested here",
                        dir.path().display()
                    );
                    continue;
                };
                mapped += 1;
                assert!(
                    report(m) == stream,
                    "{name} in chunks of {chunk}, windows of {window}"
                );
            }
        }
        eprintln!("{mapped} mapped readings compared");
    }
}
