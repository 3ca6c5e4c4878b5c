//! Docker's json-file records, `{"log":"…","stream":"…","time":"…"}` with the
//! keys in that order, read without a general JSON parser: serde_json's time
//! per record is about as long as reading the rest of such a log. Anything else — other keys or
//! order, `\u` escapes, a control byte, bad UTF-8, spaces — returns `None`,
//! and the general reader decides, so what is read here is exactly what it
//! would read (checked against it in the tests below).

use crate::input::pieces::{Framing, Stream};

const HEAD: &[u8] = b"{\"log\":\"";
const STREAM: &[u8] = b",\"stream\":\"";
const TIME: &[u8] = b",\"time\":\"";

/// The end (index of the closing quote) of the JSON string starting at `from`
/// (just after its opening quote); `None` when it does not end.
fn string_end(b: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let i = from + memchr::memchr2(b'"', b'\\', &b[from..])?;
        if b[i] == b'"' {
            return Some(i);
        }
        // The escaped byte is skipped: an escaped quote does not end the string.
        from = i + 2;
        if from > b.len() {
            return None;
        }
    }
}

/// A string's bytes between its quotes with no escape, control byte or bad UTF-8.
fn plain(s: &[u8]) -> Option<&str> {
    if has_control(s) || s.contains(&b'\\') {
        return None;
    }
    std::str::from_utf8(s).ok()
}

/// Whether `s` holds a byte below 0x20 (JSON strings may not). Every byte is
/// looked at, so the loop is vectorised (one that stops early is not).
fn has_control(s: &[u8]) -> bool {
    s.iter().fold(false, |any, &c| any | (c < 0x20))
}

/// Appends the decoded string `s` (between its quotes) to `out`.
fn decode(s: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut rest = s;
    loop {
        let Some(i) = memchr::memchr(b'\\', rest) else {
            out.extend_from_slice(rest);
            return Some(());
        };
        out.extend_from_slice(&rest[..i]);
        let c = match rest.get(i + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            // `\uXXXX` (Docker writes `<`, `>`, `&`, colour codes that way) and
            // anything else: the general reader's.
            _ => return None,
        };
        out.push(c);
        rest = &rest[i + 2..];
    }
}

/// The record's time, a space and its text without the trailing newline, in
/// `out`; `None` (with `out` in any state) when the line is not in this layout.
pub(super) fn unwrap(line: &[u8], out: &mut Vec<u8>) -> Option<Framing> {
    let log_from = HEAD.len();
    if !line.starts_with(HEAD) {
        return None;
    }
    let log_end = string_end(line, log_from)?;
    let rest = line[log_end + 1..].strip_prefix(STREAM)?;
    let stream_end = memchr::memchr(b'"', rest)?;
    let stream = plain(&rest[..stream_end])?;
    let rest = rest[stream_end + 1..].strip_prefix(TIME)?;
    let time_end = memchr::memchr(b'"', rest)?;
    let time = plain(&rest[..time_end])?;
    if &rest[time_end + 1..] != b"}" {
        return None;
    }
    let log = &line[log_from..log_end];
    if has_control(log) {
        return None;
    }
    out.clear();
    out.extend_from_slice(time.as_bytes());
    out.push(b' ');
    let text_from = out.len();
    decode(log, out)?;
    std::str::from_utf8(&out[text_from..]).ok()?;
    let (len, piece) = super::line_end(&out[text_from..], true);
    out.truncate(text_from + len);
    Some(Framing {
        text_from,
        piece,
        stream: Stream::named(Some(stream.as_bytes())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::pieces::PIECE_BYTES;
    use proptest::prelude::*;

    /// What the general reader makes of a line, or `None`.
    fn general(line: &[u8]) -> Option<(Vec<u8>, Framing)> {
        let mut out = Vec::new();
        super::super::unwrap_general(line, &mut out).map(|u| (out, u))
    }

    fn fast(line: &[u8]) -> Option<(Vec<u8>, Framing)> {
        let mut out = b"stale".to_vec();
        unwrap(line, &mut out).map(|u| (out, u))
    }

    fn record(log_json: &str, stream: &str, time: &str) -> String {
        format!("{{\"log\":{log_json},\"stream\":\"{stream}\",\"time\":\"{time}\"}}")
    }

    #[test]
    fn docker_records_are_read_here_as_the_general_reader_reads_them() {
        let line = record(
            r#""[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, a \"q\" \\ \/ tab\t\r\n""#,
            "stderr",
            "2026-02-24T18:00:00.123456789Z",
        );
        let got = fast(line.as_bytes()).expect("the common layout");
        assert_eq!(Some(got.clone()), general(line.as_bytes()));
        assert_eq!(
            String::from_utf8(got.0).unwrap(),
            "2026-02-24T18:00:00.123456789Z [2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, a \"q\" \\ / tab\t"
        );
        // Left to the general reader: `\u` escapes, other layouts, broken records.
        for line in [
            record(r#""colour \u001b[0m\n""#, "stdout", "t"),
            r#"{"log":"x\n","time":"t","stream":"stdout"}"#.to_string(),
            r#"{"log": "x\n","stream":"stdout","time":"t"}"#.to_string(),
            r#"{"log":"x\n","stream":"stdout","time":"t"} "#.to_string(),
            r#"{"log":"x\n","stream":"stdout","time":"t","attrs":{}}"#.to_string(),
            r#"{"log":"cut"#.to_string(),
            r#"{"log":"x\"#.to_string(),
            record("\"raw\ttab\"", "stdout", "t"),
            record(r#""x""#, "std\\out", "t"),
        ] {
            assert_eq!(fast(line.as_bytes()), None, "{line}");
        }
        assert_eq!(
            fast(b"{\"log\":\"\xff\",\"stream\":\"s\",\"time\":\"t\"}"),
            None
        );
    }

    #[test]
    fn whatever_is_read_here_the_general_reader_reads_alike() {
        // Texts from pieces that matter to JSON strings, encoded as serde_json
        // does or with escapes written by hand; streams and times likewise.
        const PIECES: [&str; 16] = [
            "Decode batch, ",
            "#running-req: 56",
            "é",
            "日本",
            "\"",
            "\\",
            "/",
            "\n",
            "\r",
            "\t",
            "\u{1b}[0m",
            "\u{7f}",
            "\u{0}",
            "<&>",
            " ",
            "\u{2028}",
        ];
        let mut rng = batchlens_sim::rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: usize| rng.below(n);
        let mut hits = 0;
        for _ in 0..20_000 {
            let text: String = (0..next(12)).map(|_| PIECES[next(PIECES.len())]).collect();
            let log_json = match next(3) {
                0 => serde_json::to_string(&text).unwrap(),
                1 => format!(
                    "\"{}\"",
                    text.replace('\\', "\\\\")
                        .replace('"', "\\\"")
                        .replace('\n', "\\n")
                        .replace('/', "\\/")
                ),
                _ => format!("\"{text}\""),
            };
            let stream = ["stdout", "stderr", "", "s\\\"t"][next(4)];
            let time = ["2026-02-24T18:00:00.123456789Z", "", "t\\\"", "日"][next(4)];
            let line = record(&log_json, stream, time);
            if let Some(got) = fast(line.as_bytes()) {
                hits += 1;
                assert_eq!(Some(got), general(line.as_bytes()), "{line}");
            }
        }
        assert!(hits > 2_000, "{hits} of 20,000 read here");
    }

    proptest! {
        #[test]
        fn any_bytes_read_here_read_alike_there(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut line = HEAD.to_vec();
            line.extend_from_slice(&bytes);
            line.extend_from_slice(b"\",\"stream\":\"stdout\",\"time\":\"t\"}");
            if let Some(got) = fast(&line) {
                prop_assert_eq!(Some(got), general(&line));
            }
        }
    }

    #[test]
    fn a_line_docker_cut_reads_as_pieces_here_and_there() {
        let long = "x".repeat(PIECE_BYTES - 20);
        for (text, piece) in [
            (
                format!("[2026-02-24 10:55:32] server_args=ServerArgs({long}"),
                true,
            ),
            (format!("{long}{long}\n"), false),
            (format!("{long}\r"), false),
            ("short, its newline lost".to_string(), false),
        ] {
            let line = record(&serde_json::to_string(&text).unwrap(), "stderr", "t");
            let (out, u) = fast(line.as_bytes()).expect("the common layout");
            assert_eq!(Some((out.clone(), u)), general(line.as_bytes()));
            assert_eq!(u.piece, piece, "{}", &text[..40]);
            assert_eq!(u.text_from, 2);
            // A piece keeps its every byte; a whole line loses its line end.
            let kept = if piece {
                &text[..]
            } else {
                text.trim_end_matches(['\n', '\r'])
            };
            assert_eq!(&out[2..], kept.as_bytes());
        }
        // Only Docker's `log` field is cut so; other collectors' texts are whole lines.
        let line = format!(
            r#"{{"message":{}}}"#,
            serde_json::to_string(&"y".repeat(PIECE_BYTES)).unwrap()
        );
        assert_eq!(general(line.as_bytes()).map(|(_, u)| u.piece), Some(false));
    }

    #[test]
    fn the_usual_docker_record_takes_this_path() {
        let text = "[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, token usage: 0.70\n";
        let line = record(
            &serde_json::to_string(text).unwrap(),
            "stderr",
            "2026-02-24T18:00:00Z",
        );
        assert!(fast(line.as_bytes()).is_some());
    }
}
