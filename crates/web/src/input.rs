//! What the page was given: plain log text, or a gzip file (rotated production
//! logs usually are), told apart by the first two bytes as the CLI does. Gzip is
//! inflated as it arrives, slice by slice, so memory stays flat at any size.

use std::io::Write;

use batchlens_core::{Analyzer, Kept, Report};
use flate2::write::MultiGzDecoder;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The analyzer, as the sink of the inflated bytes (taken back out at the end,
/// also when the stream ends in error: the inflater gives its sink back only
/// after a clean end).
struct Sink(Option<Analyzer>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(a) = &mut self.0 {
            a.feed(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum State {
    /// Fewer bytes seen than the gzip magic: kept until the kind is known
    /// (the analyzer is only absent while the kind is being decided).
    Head(Option<Analyzer>, Vec<u8>),
    Plain(Analyzer),
    /// Boxed: the inflater's state is large and the other states are small.
    Gzip(Box<MultiGzDecoder<Sink>>),
}

/// A log fed in slices, plain or gzip.
pub struct Input {
    state: State,
}

impl Input {
    pub fn new(analyzer: Analyzer) -> Input {
        Input {
            state: State::Head(Some(analyzer), Vec::new()),
        }
    }

    /// Reads the next slice. An error means the gzip stream is damaged; what
    /// was inflated before it stays in the analyzer.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), String> {
        if let State::Head(analyzer, head) = &mut self.state {
            head.extend_from_slice(chunk);
            if head.len() < GZIP_MAGIC.len() {
                return Ok(());
            }
            let analyzer = analyzer.take().expect("present until the kind is known");
            let head = std::mem::take(head);
            self.state = if head.starts_with(&GZIP_MAGIC) {
                State::Gzip(Box::new(MultiGzDecoder::new(Sink(Some(analyzer)))))
            } else {
                State::Plain(analyzer)
            };
            return self.pass(&head);
        }
        self.pass(chunk)
    }

    fn pass(&mut self, bytes: &[u8]) -> Result<(), String> {
        match &mut self.state {
            State::Head(..) => unreachable!("the kind is known"),
            State::Plain(a) => {
                a.feed(bytes);
                Ok(())
            }
            State::Gzip(d) => d
                .write_all(bytes)
                .map_err(|e| format!("the gzip file is damaged: {e}")),
        }
    }

    /// Whether the input is gzip (known after its first two bytes).
    pub fn is_gzip(&self) -> bool {
        matches!(self.state, State::Gzip(_))
    }

    fn analyzer(&self) -> &Analyzer {
        let a = match &self.state {
            State::Head(a, _) => a.as_ref(),
            State::Plain(a) => Some(a),
            State::Gzip(d) => d.get_ref().0.as_ref(),
        };
        a.expect("the analyzer is only taken out at the end")
    }

    /// Log bytes read so far (inflated ones for gzip).
    pub fn log_bytes(&self) -> u64 {
        self.analyzer().bytes()
    }

    /// Physical lines read so far.
    pub fn lines(&self) -> u64 {
        self.analyzer().lines()
    }

    /// Ends the input: the report, and an error when a gzip stream ends part-way
    /// or fails its check (the report then covers what was inflated).
    #[cfg(test)]
    pub fn finish(self) -> (Report, Option<String>) {
        let (a, cut) = self.end();
        (a.finish(), cut)
    }

    /// [`Input::finish`], with what the read kept (with `Options::keep`) to judge
    /// another run or zoom without reading again.
    pub fn finish_keeping(self) -> (Report, Option<Kept>, Option<String>) {
        let (a, cut) = self.end();
        let (report, kept) = a.finish_keeping();
        (report, kept, cut)
    }

    /// Ends this file and starts the next of several read as one log (its own
    /// first bytes tell gzip and encoding), with an error when the gzip stream
    /// that ends was cut short or fails its check.
    pub fn next(self) -> (Input, Option<String>) {
        let (mut a, cut) = self.end();
        a.next_input();
        (Input::new(a), cut)
    }

    /// Ends this file: the analyzer, and an error when a gzip stream ends
    /// part-way or fails its check.
    fn end(self) -> (Analyzer, Option<String>) {
        match self.state {
            State::Head(a, head) => {
                let mut a = a.expect("present until the kind is known");
                a.feed(&head);
                (a, None)
            }
            State::Plain(a) => (a, None),
            State::Gzip(mut d) => {
                // A stream cut short fails its end check (no CRC and length
                // trailer), as does one whose damage inflated without error.
                let cut = d.try_finish().err().map(|e| {
                    format!("the gzip file is damaged or cut short (copied in part?): {e}")
                });
                let a = d.get_mut().0.take().expect("taken out once, here");
                (a, cut)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use batchlens_core::Options;
    use flate2::{write::GzEncoder, Compression};

    const LOG: &[u8] = include_bytes!(
        "../../../tests/fixtures/sglang/sglang_23_deepseek-v3-kv-full-decode-oom-retract.log"
    );

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// The text as UTF-16LE with its byte-order mark (PowerShell's `>`).
    fn utf16le(text: &[u8]) -> Vec<u8> {
        let mut b = vec![0xff, 0xfe];
        for u in String::from_utf8_lossy(text).encode_utf16() {
            b.extend(u.to_le_bytes());
        }
        b
    }

    fn read(bytes: &[u8], slice: usize) -> (Result<(), String>, bool, Report, Option<String>) {
        let mut i = Input::new(Analyzer::new(Options::default()));
        let fed = bytes.chunks(slice).try_for_each(|c| i.feed(c));
        let gz = i.is_gzip();
        let (r, cut) = i.finish();
        (fed, gz, r, cut)
    }

    fn json(r: &Report) -> String {
        serde_json::to_string(r).unwrap()
    }

    #[test]
    fn a_gzip_file_reads_like_its_text_in_any_slicing() {
        let plain = batchlens_core::analyze(LOG, Options::default());
        assert!(plain.input.stat_lines > 0);
        let gz = gzip(LOG);
        // Two members, as `cat a.gz b.gz` makes: one log.
        let half = LOG.len() / 2;
        let cut = half + LOG[half..].iter().position(|&c| c == b'\n').unwrap() + 1;
        let members = [gzip(&LOG[..cut]), gzip(&LOG[cut..])].concat();
        for bytes in [&gz, &members] {
            for slice in [1, 2, 3, 100, 4096, bytes.len()] {
                let (fed, is_gz, r, cut) = read(bytes, slice);
                assert_eq!(fed, Ok(()));
                assert!(is_gz && cut.is_none(), "slices of {slice}");
                assert_eq!(json(&r), json(&plain), "slices of {slice}");
            }
        }
        let (fed, is_gz, r, cut) = read(LOG, 1);
        assert!(fed.is_ok() && !is_gz && cut.is_none());
        assert_eq!(json(&r), json(&plain));
    }

    #[test]
    fn files_one_after_another_read_as_their_concatenation() {
        let plain = json(&batchlens_core::analyze(LOG, Options::default()));
        let cut = LOG.len() / 3;
        let wide = utf16le(&LOG[cut..]);
        // Gzip then plain, plain then gzip, plain then UTF-16, and a cut mid-line:
        // the text in order, as `cat` gives.
        for (first, second) in [
            (gzip(&LOG[..cut]), LOG[cut..].to_vec()),
            (LOG[..cut].to_vec(), gzip(&LOG[cut..])),
            (LOG[..cut].to_vec(), wide),
        ] {
            let mut i = Input::new(Analyzer::new(Options::default()));
            i.feed(&first).unwrap();
            let (mut i, err) = i.next();
            assert_eq!(err, None);
            for c in second.chunks(777) {
                i.feed(c).unwrap();
            }
            let (mut r, err) = i.finish();
            assert_eq!(err, None);
            // Bytes are the files' (UTF-16 takes two a character).
            (r.input.encoding, r.input.bytes) = (None, LOG.len() as u64);
            assert_eq!(json(&r), plain);
        }
    }

    #[test]
    fn a_utf16_file_reads_as_its_text() {
        let wide = utf16le(LOG);
        let mut want = batchlens_core::analyze(LOG, Options::default());
        for slice in [1, 4096] {
            let (fed, is_gz, mut r, cut) = read(&wide, slice);
            assert!(fed.is_ok() && !is_gz && cut.is_none());
            assert_eq!(r.input.encoding.as_deref(), Some("utf-16le"));
            (r.input.encoding, r.input.bytes, want.input.bytes) = (None, 0, 0);
            assert_eq!(json(&r), json(&want), "slices of {slice}");
        }
    }

    #[test]
    fn short_inputs_are_text_even_when_they_start_like_gzip() {
        for bytes in [&b""[..], b"\x1f", b"x", b"\x1fx"] {
            let (fed, is_gz, r, cut) = read(bytes, 1);
            assert!(fed.is_ok() && !is_gz && cut.is_none(), "{bytes:?}");
            assert_eq!(r.input.bytes, bytes.len() as u64);
        }
    }

    #[test]
    fn a_cut_or_damaged_gzip_file_says_so_and_keeps_what_was_read() {
        let gz = gzip(LOG);
        let (fed, _, r, cut) = read(&gz[..gz.len() * 2 / 3], 1000);
        assert_eq!(fed, Ok(()));
        assert!(cut.unwrap().contains("cut short"));
        assert!(r.input.bytes > 0 && r.input.bytes < LOG.len() as u64);

        // Only the trailer missing: every line is in, the end check still fails.
        let (_, _, r, cut) = read(&gz[..gz.len() - 4], 1000);
        assert!(cut.is_some());
        assert_eq!(r.input.bytes, LOG.len() as u64);

        let mut bad = gz.clone();
        let mid = bad.len() / 2;
        for b in &mut bad[mid..mid + 32] {
            *b ^= 0x5a;
        }
        // Found while inflating, or by the checksum at the end.
        let (fed, _, _, cut) = read(&bad, 1000);
        let err = fed.err().or(cut).expect("the damage is found");
        assert!(err.contains("damaged"), "{err}");
    }
}
