//! Logs of inference servers batchlens does not read (yet): told apart by
//! phrases only they print, so a user who brings one hears which server wrote
//! it and why its log cannot show what limits throughput, instead of only
//! "no stats lines".

use crate::report::OtherServer;
use std::sync::OnceLock;

use memchr::memmem::Finder;

use crate::engines::gate::Gate;
use crate::text::fields::excerpt;

/// Lines no engine parser claims that are looked at: a server's phrases show in
/// its first lines (most of these servers print them on every line), and the
/// search then costs nothing on a long log.
const SAMPLE_LINES: u32 = 5_000;
/// Bytes of those lines looked at, at most: a log whose first lines carry
/// whole prompts (request logs) would otherwise have GBs searched ~30 times.
const SAMPLE_BYTES: usize = 4 << 20;
const EXAMPLE_CHARS: usize = 120;

/// (server, phrases only it prints, what its log holds), in precedence order:
/// a server that embeds another (Ollama and llama-box run llama.cpp) comes first.
const SERVERS: &[(&str, &[&str], &str)] = &[
    (
        "Ollama",
        &["[GIN] ", "ollama  | ", "ollama["],
        "Ollama logs one access line per request and no periodic batch or KV-cache line, so the log cannot show what limits throughput; OLLAMA_NUM_PARALLEL sets how many requests it serves side by side",
    ),
    (
        "llama-box",
        &["llama-box", "reconcile: rid "],
        "llama-box logs per-request events, not periodic batch stats",
    ),
    (
        "llama.cpp",
        &[
            "print_timing",
            "slot launch_slot_",
            "slot update_slots",
            "slot      release",
            "srv  update_slots",
            "all slots are idle",
            "llama_new_context_with_model",
            "prompt eval time =",
        ],
        "llama.cpp's server logs timings per request and slot, not periodic batch stats; the number of slots (--parallel) caps how many requests run at once",
    ),
    (
        "LMDeploy",
        &[
            "Avg thr (in/out):",
            "Engine (running/waiting):",
            " - lmdeploy - ",
            // The metrics line of LMDeploy 0.9–0.12, a look-alike of vLLM's.
            "Unfinished: ",
        ],
        "LMDeploy prints its metrics line (`Avg thr (in/out) … Engine (running/waiting) … KV cache`), which batchlens reads, every 10 s only while metrics are on (`--enable-metrics`; off by default before v0.12) and while it processes tokens: run it with metrics on under load",
    ),
    (
        "TensorRT-LLM",
        &[
            "[TRT-LLM]",
            "[TensorRT-LLM]",
            "libtensorrtllm",
            "\"Active Request Count\"",
            "inflightBatchingStats",
            "iterLatencyMS",
        ],
        "TensorRT-LLM prints per-iteration stats, which batchlens reads, only when asked: `trtllm-serve` with `print_iter_log: true` in the YAML of --extra_llm_api_options (the `iter = … states = {…}` lines), Triton's backend with --log-verbose=1 (its stats JSON), or the JSON of `GET /metrics` with `enable_iter_perf_stats: true` saved to a file",
    ),
    (
        "TEI",
        &["text_embeddings_router", "text_embeddings_core", "text_embeddings_backend"],
        "TEI is an embeddings server: it logs per-request times, not batch stats",
    ),
    (
        "TGI",
        &[
            "text_generation_router",
            "text_generation_launcher",
            "text_generation_server",
        ],
        "TGI logs one line per finished request (queue and inference times) and no periodic queue or KV-cache line, so in-flight and queued load cannot be read from it",
    ),
    (
        "vllm.rs",
        &["vllm_rs::"],
        "vllm.rs is a Rust server of its own, not vLLM; batchlens does not read its log format",
    ),
];

/// Counts, over the first lines no engine parser claims, the lines that hold
/// each server's phrases.
pub(crate) struct OtherServers {
    seen: u32,
    seen_bytes: usize,
    /// Per server: lines, first line, its text.
    found: Vec<(u64, u64, String)>,
}

impl Default for OtherServers {
    fn default() -> Self {
        OtherServers {
            seen: 0,
            seen_bytes: 0,
            found: vec![(0, 0, String::new()); SERVERS.len()],
        }
    }
}

/// The servers' phrases, compiled once (they are the same for every log).
struct Phrases {
    /// The phrases long enough for the gate (nearly all): one pass over a
    /// line finds which it holds, where ~35 searches cost ~8 times more.
    gate: Gate,
    /// Per gate phrase (its bit), the server that prints it.
    gated: Vec<usize>,
    /// The shorter phrases, searched one by one.
    finders: Vec<(usize, Finder<'static>)>,
}

fn phrases() -> &'static Phrases {
    static P: OnceLock<Phrases> = OnceLock::new();
    P.get_or_init(|| {
        let mut p = Phrases {
            gate: Gate::default(),
            gated: Vec::new(),
            finders: Vec::new(),
        };
        for (i, (_, phrases, _)) in SERVERS.iter().enumerate() {
            for ph in phrases.iter().map(|ph| ph.as_bytes()) {
                if ph.len() >= Gate::SHORTEST {
                    p.gate.add(ph);
                    p.gated.push(i);
                } else {
                    p.finders.push((i, Finder::new(ph)));
                }
            }
        }
        p
    })
}

/// The servers whose phrases `line` holds, a bit each (in [`SERVERS`] order).
fn servers_in(line: &[u8]) -> u32 {
    const _: () = assert!(SERVERS.len() <= 32, "a bit per server in a u32");
    let p = phrases();
    let mut holds = 0u32;
    let mut bits = p.gate.found(line);
    while bits != 0 {
        holds |= 1 << p.gated[bits.trailing_zeros() as usize];
        bits &= bits - 1;
    }
    for (server, f) in &p.finders {
        if holds & 1 << server == 0 && f.find(line).is_some() {
            holds |= 1 << server;
        }
    }
    holds
}

impl OtherServers {
    /// Whether lines are still looked at.
    #[inline]
    pub fn sampling(&self) -> bool {
        self.seen < SAMPLE_LINES && self.seen_bytes < SAMPLE_BYTES
    }

    /// Looks at a line no engine parser claimed.
    pub fn line(&mut self, no: u64, line: &[u8]) {
        if !self.sampling() {
            return;
        }
        self.seen += 1;
        self.seen_bytes += line.len();
        // A line counts once per server.
        let mut holds = servers_in(line);
        while holds != 0 {
            let (lines, first, text) = &mut self.found[holds.trailing_zeros() as usize];
            if *lines == 0 {
                *first = no;
                *text = excerpt(line, EXAMPLE_CHARS);
            }
            *lines += 1;
            holds &= holds - 1;
        }
    }

    /// The first server in precedence order whose phrases were seen: one that
    /// embeds another is named for itself, however many embedded lines it printed.
    pub fn finish(self) -> Option<OtherServer> {
        let (i, (lines, first, text)) =
            self.found.into_iter().enumerate().find(|(_, f)| f.0 > 0)?;
        let (name, _, note) = SERVERS[i];
        let article = match name {
            "Ollama" | "LMDeploy" => "an",
            _ => "a",
        };
        Some(OtherServer {
            name: name.to_string(),
            a_name: format!("{article} {name}"),
            lines,
            first_line: first,
            text,
            note: note.to_string(),
        })
    }
}

#[cfg(test)]
// The tests read the bundled fixture logs from disk.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<OtherServer> {
        let mut o = OtherServers::default();
        for (i, l) in text.lines().enumerate() {
            o.line(i as u64 + 1, l.as_bytes());
        }
        o.finish()
    }

    #[test]
    fn a_server_that_embeds_llama_cpp_is_named_for_itself() {
        let log = "{\"function\":\"print_timings\",\"msg\":\"prompt eval time\"}\n\
                   [GIN] 2025/05/09 - 15:14:30 | 200 |  6.674368042s |  127.0.0.1 | POST \"/api/chat\"\n";
        let o = read(log).unwrap();
        assert_eq!((o.name.as_str(), o.lines, o.first_line), ("Ollama", 1, 2));
        let o = read("slot print_timing: id  0 | task 0 |\n").unwrap();
        assert_eq!(o.name, "llama.cpp");
    }

    /// Each server's phrases searched one by one, as bits.
    fn searched(line: &[u8]) -> u32 {
        SERVERS
            .iter()
            .enumerate()
            .filter(|(_, (_, phrases, _))| {
                phrases
                    .iter()
                    .any(|p| memchr::memmem::find(line, p.as_bytes()).is_some())
            })
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    #[test]
    fn the_servers_a_line_holds_are_the_ones_a_search_finds() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for dir in std::fs::read_dir(format!("{root}/tests/fixtures")).expect("fixtures") {
            let dir = dir.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            for e in std::fs::read_dir(dir).expect("dir") {
                let text = std::fs::read(e.expect("entry").path()).expect("read");
                lines.extend(text.split(|&c| c == b'\n').map(<[u8]>::to_vec));
            }
        }
        // Every phrase at every offset after heads like the servers' own, and two at once.
        let heads: [&[u8]; 4] = [
            b"[2026-02-24 10:55:32] ",
            b"2024-12-10T21:49:50.317182Z  INFO ",
            b"time=2025-05-09T15:14:30.000Z level=INFO ",
            b"I1218 03:35:37.688135 20559 ",
        ];
        let phrases: Vec<&[u8]> = SERVERS
            .iter()
            .flat_map(|(_, ps, _)| ps.iter().map(|p| p.as_bytes()))
            .collect();
        for (k, p) in phrases.iter().enumerate() {
            for head in heads {
                for at in 0..=head.len() {
                    let mut l = head[..at].to_vec();
                    l.extend_from_slice(p);
                    l.extend_from_slice(&head[at..]);
                    l.extend_from_slice(phrases[(k * 7 + at) % phrases.len()]);
                    lines.push(l);
                }
            }
        }
        let mut found = 0;
        for l in &lines {
            let want = searched(l);
            assert_eq!(servers_in(l), want, "{}", String::from_utf8_lossy(l));
            found += usize::from(want != 0);
        }
        assert!(found > 1000, "{found} lines with a server's phrase");
    }

    #[test]
    fn only_the_first_lines_are_looked_at() {
        let mut o = OtherServers::default();
        for i in 0..SAMPLE_LINES as u64 {
            o.line(i + 1, b"[2026-02-24 10:55:40] INFO:     127.0.0.1:30819 - \"POST /generate HTTP/1.1\" 200 OK");
        }
        assert!(!o.sampling());
        o.line(
            99_999,
            b"2024-12-10T21:49:50Z  INFO text_generation_router::server: Connected",
        );
        assert_eq!(o.finish(), None);
        // Lines that carry whole prompts: the look stops after its bytes.
        let mut o = OtherServers::default();
        let prompt = format!(
            "[2026-02-24 10:55:40] Receive: obj=GenerateReqInput(text='{}')",
            "word ".repeat(2000)
        );
        let mut n = 0;
        while o.sampling() {
            o.line(n + 1, prompt.as_bytes());
            n += 1;
        }
        assert!(n < SAMPLE_LINES as u64 / 4, "{n} lines looked at");
        assert!(n as usize * prompt.len() >= SAMPLE_BYTES);
    }
}
