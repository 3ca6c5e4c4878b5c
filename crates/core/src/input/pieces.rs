//! Lines that a container runtime carries in a frame of its own (Docker's
//! JSON records, Kubernetes' CRI prefix), and cuts into pieces when they are
//! long. [`crate::input::json_lines`] and [`crate::input::cri`] read the frames; the
//! analyzer joins the pieces back in order.

/// Docker's `json-file` driver and Kubernetes' CRI logs cut a line longer than
/// 16 KiB into pieces of 16 KiB: JSON records whose `log` text has no newline,
/// or lines tagged `P`; the piece that ends the line has a newline (or `F`).
/// A shorter JSON text without a newline is a whole line (a container's last
/// words, or a collector that drops newlines), not a piece.
pub const PIECE_BYTES: usize = 16 * 1024;

/// What a line's frame tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// Where the text starts: after a JSON record's time and a space (in the
    /// unwrapped text), or after the CRI prefix (in the line).
    pub text_from: usize,
    /// The text is a piece of a longer line that the next frame of its stream
    /// goes on with (see [`PIECE_BYTES`]); it is then left as it was.
    pub piece: bool,
    /// The output stream the frame names: a cut line's pieces are all in one,
    /// and the other stream's lines may come between them.
    pub stream: Stream,
}

/// The output stream a frame names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
    /// Another name, or none.
    Other,
}

impl Stream {
    pub(crate) fn named(name: Option<&[u8]>) -> Self {
        match name {
            Some(b"stdout") => Stream::Stdout,
            Some(b"stderr") => Stream::Stderr,
            _ => Stream::Other,
        }
    }
}
