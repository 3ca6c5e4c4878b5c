//! Kubernetes' CRI log files (`/var/log/pods/…`): each line is
//! `2026-02-24T18:00:00.123456789Z stderr F <text>`, where the tag `P` marks a
//! piece of a line longer than 16 KiB that the runtime cut, and `F` the line's
//! end (or a whole line). The engine parsers read the line behind the prefix
//! as it stands; pieces are joined back by the analyzer, like Docker's
//! (see [`crate::input::pieces`]).

use crate::input::pieces::{Framing, Stream};

/// Longest timestamp looked for: RFC 3339 with nanoseconds and an offset.
const MAX_STAMP: usize = 40;

/// Whether `line` may be a piece of a cut line (`…Z stderr P …`): one byte
/// tells for most lines, which start with no digit.
#[inline]
pub fn may_be_piece(line: &[u8]) -> bool {
    line.first().is_some_and(u8::is_ascii_digit) && read(line).is_some_and(|u| u.piece)
}

/// The prefix of a CRI line: where its text starts, whether it is a piece (`P`)
/// and its stream. `None` for any other line.
pub fn read(line: &[u8]) -> Option<Framing> {
    // `YYYY-MM-DDT…`: a digit first, `-` fifth.
    if !line.first()?.is_ascii_digit() || line.get(4) != Some(&b'-') {
        return None;
    }
    let head = &line[..line.len().min(MAX_STAMP + 1)];
    let space = memchr::memchr(b' ', head)?;
    let stamp = &line[..space];
    if stamp.get(10) != Some(&b'T') || !stamp[..4].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let rest = &line[space + 1..];
    let (stream, rest) = if let Some(r) = rest.strip_prefix(b"stdout ") {
        (Stream::Stdout, r)
    } else {
        (Stream::Stderr, rest.strip_prefix(b"stderr ")?)
    };
    let (piece, rest) = match rest {
        [tag @ (b'P' | b'F')] => (*tag == b'P', &rest[1..]),
        [tag @ (b'P' | b'F'), b' ', text @ ..] => (*tag == b'P', text),
        _ => return None,
    };
    Some(Framing {
        text_from: line.len() - rest.len(),
        piece,
        stream,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_gives_the_text_its_tag_and_stream() {
        fn r(l: &str) -> Option<(&str, bool, Stream)> {
            read(l.as_bytes()).map(|u| (&l[u.text_from..], u.piece, u.stream))
        }
        assert_eq!(
            r("2026-02-24T18:00:00.123456789Z stderr F [2026-02-24 10:55:32 TP0] Decode batch"),
            Some((
                "[2026-02-24 10:55:32 TP0] Decode batch",
                false,
                Stream::Stderr
            ))
        );
        assert_eq!(
            r("2026-02-24T18:00:00.1+01:00 stdout P server_args=ServerArgs("),
            Some(("server_args=ServerArgs(", true, Stream::Stdout))
        );
        assert_eq!(
            r("2026-02-24T18:00:00Z stdout F"),
            Some(("", false, Stream::Stdout))
        );
        for other in [
            "[2026-02-24 10:55:32 TP0] Decode batch",
            "2026-02-24 18:00:00 stderr F text",
            "2026-02-24T18:00:00Z stdin F text",
            "2026-02-24T18:00:00Z stderr X text",
            "2026-02-24T18:00:00Z stderr Ftext",
            "2026-02-24T18:00:00Z",
            "2026-",
            "12345",
            "",
        ] {
            assert_eq!(r(other), None, "{other}");
        }
    }
}
