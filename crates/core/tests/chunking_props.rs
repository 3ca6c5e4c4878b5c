//! Property tests: the report does not depend on where the input is cut into
//! chunks (inside a multi-byte character, between `\r` and `\n`, anywhere), over
//! generated logs mixing valid, damaged, coloured, CRLF, multibyte and glued
//! lines; and arbitrary bytes never panic.

mod common;
use common::*;

use batchlens_core::Report;
use proptest::prelude::*;

fn assert_accounted(r: &Report) {
    let i = &r.input;
    assert_eq!(i.accounted_lines(), i.lines, "line accounting {i:?}");
}

fn decode(sec: u32, dp: Option<u8>, running: u32, queued: u32, gen: u32) -> String {
    let rank = match dp {
        Some(d) => format!(" DP{d} TP{d}"),
        None => " TP0".to_string(),
    };
    format!(
        "[2026-05-07 1{}:{:02}:{:02}{rank}] Decode batch, #running-req: {running}, #token: {}, token usage: 0.{:02}, cuda graph: True, gen throughput (token/s): {gen}.{:02}, #queue-req: {queued}",
        sec / 3600 % 10,
        sec / 60 % 60,
        sec % 60,
        running * 731,
        running % 100,
        gen % 100
    )
}

fn prefill(sec: u32, new_tokens: u32, queued: u32) -> String {
    format!(
        "[2026-05-07 1{}:{:02}:{:02} TP0] Prefill batch, #new-seq: 3, #new-token: {new_tokens}, #cached-token: 17, token usage: 0.12, #running-req: 4, #queue-req: {queued}",
        sec / 3600 % 10,
        sec / 60 % 60,
        sec % 60
    )
}

/// One physical line of a generated log (without its line end).
#[derive(Debug, Clone)]
enum Piece {
    Decode(Option<u8>, u32, u32, u32),
    Prefill(u32, u32),
    /// A decode line cut short at this fraction (per mille) of its length.
    Damaged(u32, u16),
    /// A decode line with colour codes around every word.
    Ansi(u32, u32),
    /// Text with multi-byte characters.
    Multibyte(usize),
    /// Two or three records with the newlines between them lost.
    Glued(u8, u32),
    Access(u16),
    Retraction(u8),
    Blank,
}

const MULTIBYTE: [&str; 4] = [
    "[2026-05-07 10:00:00] INFO: 模型已加载 ✓ — ünïcödé ½ 🚀",
    "Fortschritt: 50 % ████▌     | 日本語のログ",
    "ошибка: нет ответа от сервера (μs) ≤ ∞",
    "\u{feff}BOM and emoji 🙂🙃 in the middle of nowhere",
];

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => (proptest::option::of(0u8..4), 0u32..600, 0u32..50, 0u32..5000)
            .prop_map(|(d, r, q, g)| Piece::Decode(d, r, q, g)),
        2 => (0u32..9000, 0u32..80).prop_map(|(t, q)| Piece::Prefill(t, q)),
        2 => (0u32..600, 0u16..1000).prop_map(|(r, f)| Piece::Damaged(r, f)),
        1 => (0u32..600, 0u32..50).prop_map(|(r, q)| Piece::Ansi(r, q)),
        1 => (0usize..MULTIBYTE.len()).prop_map(Piece::Multibyte),
        1 => (2u8..4, 0u32..600).prop_map(|(n, r)| Piece::Glued(n, r)),
        2 => any::<u16>().prop_map(Piece::Access),
        1 => (0u8..4).prop_map(Piece::Retraction),
        1 => Just(Piece::Blank),
    ]
}

fn render(pieces: &[Piece], crlf: &[bool], final_newline: bool) -> Vec<u8> {
    let mut out = String::new();
    for (k, p) in pieces.iter().enumerate() {
        // Time moves on one second per line (so rounds close and the clock is monotone).
        let sec = 3600 + k as u32;
        let text = match p {
            Piece::Decode(dp, r, q, g) => decode(sec, *dp, *r, *q, *g),
            Piece::Prefill(t, q) => prefill(sec, *t, *q),
            Piece::Damaged(r, f) => {
                let l = decode(sec, None, *r, 1, 100);
                // Cut on a char boundary (the line is ASCII).
                l[..l.len() * *f as usize / 1000].to_string()
            }
            Piece::Ansi(r, q) => decode(sec, None, *r, *q, 321)
                .split(' ')
                .enumerate()
                .map(|(i, w)| format!("\x1b[{}m{w}\x1b[0m", 31 + i % 6))
                .collect::<Vec<_>>()
                .join(" "),
            Piece::Multibyte(i) => MULTIBYTE[*i].to_string(),
            Piece::Glued(n, r) => (0..*n as u32)
                .map(|j| decode(sec, None, r + j, j, 1000 + j))
                .collect::<String>(),
            Piece::Access(port) => format!(
                "[2026-05-07 10:00:00] INFO:     127.0.0.1:{port} - \"POST /generate HTTP/1.1\" 200 OK"
            ),
            Piece::Retraction(tp) => format!(
                "[2026-05-07 10:00:00 TP{tp}] Decode out of memory happened. #retracted_reqs: 2, #new_token_ratio: 0.1 -> 0.5"
            ),
            Piece::Blank => String::new(),
        };
        out.push_str(&text);
        let last = k + 1 == pieces.len();
        if !last || final_newline {
            out.push_str(if crlf[k % crlf.len()] { "\r\n" } else { "\n" });
        }
    }
    out.into_bytes()
}

/// Cut points: random ones, plus some inside `\r\n` pairs and inside multi-byte characters.
fn interesting_cuts(bytes: &[u8], random: &[usize], pick: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = random.iter().map(|&c| c % (bytes.len() + 1)).collect();
    let crlf: Vec<usize> = bytes
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\r\n")
        .map(|(i, _)| i + 1)
        .collect();
    let inside_char: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| (0x80..0xc0).contains(&b))
        .map(|(i, _)| i)
        .collect();
    for set in [&crlf, &inside_char] {
        if !set.is_empty() {
            cuts.push(set[pick % set.len()]);
            cuts.push(set[(pick / 7) % set.len()]);
        }
    }
    cuts.sort_unstable();
    cuts
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn generated_logs_read_the_same_whatever_the_chunks(
        pieces in proptest::collection::vec(piece(), 0..60),
        crlf in proptest::collection::vec(any::<bool>(), 1..8),
        final_newline in any::<bool>(),
        random in proptest::collection::vec(any::<usize>(), 0..12),
        pick in any::<usize>(),
    ) {
        let bytes = render(&pieces, &crlf, final_newline);
        let whole = analyze(&bytes);
        assert_accounted(&whole);
        // Reading ahead inside `feed` gives what reading line by line gives.
        prop_assert_eq!(&whole, &analyze_line_by_line(&bytes, Default::default()));
        let cut = interesting_cuts(&bytes, &random, pick);
        let split = analyze_split(&bytes, &cut);
        prop_assert_eq!(&whole, &split, "cuts {:?}", cut);
        // Every valid stats record written is read (damaged ones may or may not be).
        let valid = pieces.iter().map(|p| match p {
            Piece::Decode(..) | Piece::Prefill(..) | Piece::Ansi(..) => 1,
            Piece::Glued(n, _) => *n as u64,
            _ => 0,
        }).sum::<u64>();
        prop_assert!(whole.input.stat_lines + whole.input.damaged_stat_lines >= valid);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_chunking_does_not_matter(
        bytes in proptest::collection::vec(any::<u8>(), 0..3000),
        random in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let whole = analyze(&bytes);
        assert_accounted(&whole);
        prop_assert_eq!(&whole, &analyze_line_by_line(&bytes, Default::default()));
        let cut = interesting_cuts(&bytes, &random, 3);
        prop_assert_eq!(&whole, &analyze_split(&bytes, &cut));
    }

    #[test]
    fn log_like_bytes_never_panic(
        parts in proptest::collection::vec(
            prop_oneof![
                Just(&b"Decode batch"[..]), Just(&b"Prefill batch"[..]), Just(&b", "[..]),
                Just(&b"#running-req: "[..]), Just(&b"gen throughput (token/s): "[..]),
                Just(&b"[2026-05-07 10:00:00 DP1 TP1] "[..]), Just(&b"\n"[..]), Just(&b"\r\n"[..]),
                Just(&b"\x1b[31m"[..]), Just(&b"\xe2\x96"[..]), Just(&b"12"[..]), Just(&b"."[..]),
                Just(&b"#queue-req: "[..]), Just(&b"token usage: "[..]), Just(&b"\0"[..]),
            ],
            0..200,
        ),
        random in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes = parts.concat();
        let whole = analyze(&bytes);
        assert_accounted(&whole);
        let cut = interesting_cuts(&bytes, &random, 5);
        prop_assert_eq!(&whole, &analyze_split(&bytes, &cut));
    }
}
