//! What a binary input is, from its first bytes: a log packed with another tool
//! than gzip (which the front ends inflate) is named, with the command that
//! unpacks it, so the user is told what to do instead of only "binary".

use crate::report::FileFormat;

/// The first bytes kept to tell a format (a tar header's magic is at 257).
pub const HEAD_BYTES: usize = 262;

/// (magic, offset, name, unpack command).
const KNOWN: &[(&[u8], usize, &str, Option<&str>)] = &[
    // Seen here only after one layer was inflated: gzip inside gzip.
    (b"\x1f\x8b", 0, "gzip", Some("gzip -dc")),
    (b"\xfd7zXZ\x00", 0, "xz", Some("xz -dc")),
    (b"BZh", 0, "bzip2", Some("bzip2 -dc")),
    (b"\x28\xb5\x2f\xfd", 0, "zstd", Some("zstd -dc")),
    (b"\x04\x22\x4d\x18", 0, "lz4", Some("lz4 -dc")),
    (b"\x5d\x00\x00", 0, "lzma", Some("xz --format=lzma -dc")),
    (b"PK\x03\x04", 0, "zip", Some("unzip -p")),
    (b"7z\xbc\xaf\x27\x1c", 0, "7z", Some("7z x -so")),
    (b"ustar", 257, "tar", Some("tar -xOf")),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image", None),
    (b"\xff\xd8\xff", 0, "JPEG image", None),
    (b"%PDF-", 0, "PDF document", None),
    (b"\x7fELF", 0, "program (ELF)", None),
    (b"SQLite format 3\x00", 0, "SQLite database", None),
];

/// The format whose magic bytes `head` (the input's first bytes) holds.
pub fn detect(head: &[u8]) -> Option<FileFormat> {
    KNOWN
        .iter()
        .find(|(magic, at, ..)| head.get(*at..).is_some_and(|h| h.starts_with(magic)))
        .map(|(_, _, name, unpack)| FileFormat {
            name: name.to_string(),
            unpack: unpack.map(str::to_string),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_logs_are_named_with_their_unpack_command() {
        let name = |h: &[u8]| detect(h).map(|f| (f.name, f.unpack));
        let xz = b"\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46";
        assert_eq!(name(xz), Some(("xz".into(), Some("xz -dc".into()))));
        assert_eq!(name(b"\x28\xb5\x2f\xfd\x24\x00").unwrap().0, "zstd");
        assert_eq!(name(b"PK\x03\x04\x14\x00").unwrap().0, "zip");
        let mut tar = vec![0u8; 512];
        tar[..10].copy_from_slice(b"server.log");
        tar[257..263].copy_from_slice(b"ustar\0");
        assert_eq!(name(&tar), Some(("tar".into(), Some("tar -xOf".into()))));
        assert_eq!(
            name(b"\x89PNG\r\n\x1a\n\0\0").unwrap(),
            ("PNG image".into(), None)
        );
        // Text, a head too short for a tar header, and unknown bytes are nothing.
        assert_eq!(name(b"[2026-02-24 10:55:32 TP0] Decode batch"), None);
        assert_eq!(name(&tar[..200]), None);
        assert_eq!(name(b"\0\x01\x02\x03"), None);
        assert_eq!(name(b""), None);
    }
}
