//! Bytes to clean lines: encodings, container framing (Docker json-file, CRI,
//! journald and collector JSON), ANSI, line splitting and wrap joining. Knows no engine.

pub mod cri;
pub mod encoding;
pub mod file_format;
pub mod json_lines;
pub mod lines;
pub mod pieces;
