//! Log lines wrapped in a JSON record: Docker's `json-file` driver
//! (`{"log":"[…] Decode batch, …\n","stream":"stderr","time":"…"}`), Fluent
//! Bit, `journalctl -o json`, Loki and cloud log exports, or an engine logging
//! through a JSON formatter. The record's text is read as the line, after the
//! record's own time when it gives one as text (as `docker logs --timestamps`
//! puts it), so the engine parsers see what they would in a plain log.

mod docker;

use std::borrow::Cow;

use serde::Deserialize;

use crate::input::pieces::{Framing, Stream, PIECE_BYTES};

/// A field that may hold text, or anything else (ignored, not an error).
#[derive(Deserialize)]
#[serde(untagged)]
enum Field<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

impl<'a> Field<'a> {
    fn text(f: &'a Option<Field<'a>>) -> Option<&'a str> {
        match f {
            Some(Field::Text(t)) => Some(t),
            _ => None,
        }
    }
}

/// The fields collectors put a line's text and time in, commonest first.
#[derive(Deserialize)]
struct Wrapped<'a> {
    #[serde(borrow, default)]
    log: Option<Field<'a>>,
    #[serde(borrow, default, rename = "MESSAGE")]
    journal_message: Option<Field<'a>>,
    #[serde(borrow, default, rename = "textPayload")]
    text_payload: Option<Field<'a>>,
    #[serde(borrow, default)]
    message: Option<Field<'a>>,
    #[serde(borrow, default)]
    line: Option<Field<'a>>,
    #[serde(borrow, default)]
    stream: Option<Field<'a>>,
    #[serde(borrow, default)]
    time: Option<Field<'a>>,
    #[serde(borrow, default, rename = "@timestamp")]
    at_timestamp: Option<Field<'a>>,
    #[serde(borrow, default)]
    timestamp: Option<Field<'a>>,
    #[serde(borrow, default)]
    asctime: Option<Field<'a>>,
}

/// Whether a line may be a JSON record (the only lines [`unwrap`] reads).
#[inline]
pub fn may_be_record(line: &[u8]) -> bool {
    line.first() == Some(&b'{')
}

/// The text of a JSON-wrapped log line, written to `out` (time, a space, the
/// text; its trailing newline dropped). False when the line is not a JSON
/// object with a text field of a known name (`out` may have been written).
pub fn unwrap(line: &[u8], out: &mut Vec<u8>) -> bool {
    read(line, out).is_some()
}

/// [`unwrap`], telling where the text starts and whether it is a piece.
pub fn read(line: &[u8], out: &mut Vec<u8>) -> Option<Framing> {
    if !may_be_record(line) {
        return None;
    }
    docker::unwrap(line, out).or_else(|| unwrap_general(line, out))
}

/// Drops a whole line's trailing newline; tells a piece (see [`PIECE_BYTES`]).
fn line_end(text: &[u8], log_field: bool) -> (usize, bool) {
    if log_field && !text.ends_with(b"\n") && text.len() >= PIECE_BYTES {
        return (text.len(), true);
    }
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    (text.len(), false)
}

/// [`read`] by a general JSON reader: any layout, any escape.
fn unwrap_general(line: &[u8], out: &mut Vec<u8>) -> Option<Framing> {
    let w = serde_json::from_slice::<Wrapped>(line).ok()?;
    let log = Field::text(&w.log);
    let text = log.or_else(|| {
        [&w.journal_message, &w.text_payload, &w.message, &w.line]
            .into_iter()
            .find_map(Field::text)
    })?;
    let (len, piece) = line_end(text.as_bytes(), log.is_some());
    let time = [&w.time, &w.at_timestamp, &w.timestamp, &w.asctime]
        .into_iter()
        .find_map(Field::text);
    out.clear();
    if let Some(t) = time {
        out.extend_from_slice(t.as_bytes());
        out.push(b' ');
    }
    let text_from = out.len();
    out.extend_from_slice(&text.as_bytes()[..len]);
    Some(Framing {
        text_from,
        piece,
        stream: Stream::named(Field::text(&w.stream).map(str::as_bytes)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<String> {
        let mut out = b"stale".to_vec();
        unwrap(line.as_bytes(), &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn collector_records_give_their_text_after_their_time() {
        assert_eq!(
            read(r#"{"log":"[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56\n","stream":"stderr","time":"2026-02-24T10:55:32.1Z"}"#).as_deref(),
            Some("2026-02-24T10:55:32.1Z [2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56")
        );
        assert_eq!(
            read(r#"{"__CURSOR":"s=1","MESSAGE":"INFO 02-24 10:55:32 [loggers.py:123] Avg prompt throughput: 1.0 tokens/s","_PID":"7"}"#).as_deref(),
            Some("INFO 02-24 10:55:32 [loggers.py:123] Avg prompt throughput: 1.0 tokens/s")
        );
        // Escapes are decoded; a time given as a number is not text and is left out.
        assert_eq!(
            read(r#"{"timestamp":1706462747,"message":"say \"hi\"\ttab \u00e9\r\n"}"#).as_deref(),
            Some("say \"hi\"\ttab é")
        );
    }

    #[test]
    fn other_json_and_broken_records_are_left_as_they_are() {
        for line in [
            r#"{"function":"print_timings","line":2998}"#,
            r#"{"log": 42}"#,
            r#"{"log":"cut sh"#,
            r#"[{"log":"x"}]"#,
            "{not json}",
            "",
            "{",
        ] {
            assert_eq!(read(line), None, "{line}");
        }
        let mut out = Vec::new();
        assert!(!unwrap(b"{\"log\":\"\xff\"}", &mut out));
    }
}
