//! Long lines a container runtime cut into pieces (see [`crate::input::pieces`]),
//! joined back in order before they are read.

use super::Analyzer;
use crate::input::lines::MAX_LINE;
use crate::input::pieces::{Framing, Stream};

/// The pieces of a cut line read so far.
pub(super) struct Piece {
    /// The first piece's line number: the joined line's.
    no: u64,
    /// The first piece's time and text, and the texts after it (up to [`MAX_LINE`]).
    text: Vec<u8>,
    /// Bytes of text the pieces held, kept or not.
    bytes: usize,
    stream: Stream,
    /// Pieces are JSON records (else CRI lines).
    json: bool,
}

impl Analyzer {
    /// [`Analyzer::join_piece`] for a CRI line; any other plain line ends a held piece.
    pub(super) fn plain_piece(&mut self, no: u64, raw: &[u8]) -> bool {
        match crate::input::cri::read(raw) {
            Some(u) => self.join_piece(no, raw, u, false),
            None => {
                self.end_piece();
                false
            }
        }
    }

    /// Takes a record that is a piece of a cut line, or the record that ends
    /// one (true), joining them; the line is read when whole. A record of the
    /// other stream, written between the pieces, is left to be read on its own.
    pub(super) fn join_piece(&mut self, no: u64, text: &[u8], u: Framing, json: bool) -> bool {
        if self.piece.as_ref().is_some_and(|p| p.json != json) {
            self.end_piece();
        }
        let Some(p) = self.piece.as_mut() else {
            if u.piece {
                self.piece = Some(Piece {
                    no,
                    text: text.to_vec(),
                    bytes: text.len() - u.text_from,
                    stream: u.stream,
                    json,
                });
            }
            return u.piece;
        };
        if p.stream != u.stream {
            return false;
        }
        let more = &text[u.text_from..];
        let room = MAX_LINE.saturating_sub(p.text.len());
        p.text.extend_from_slice(&more[..more.len().min(room)]);
        p.bytes += more.len();
        self.input.joined_pieces += 1;
        if !u.piece {
            self.end_piece();
        }
        true
    }

    /// Reads the line whose pieces were held, if any (its last piece came, or
    /// another line did).
    pub(super) fn end_piece(&mut self) {
        if let Some(p) = self.piece.take() {
            self.overlong_joined += (p.bytes > MAX_LINE) as u64;
            self.on_text(p.no, &p.text);
        }
    }
}
