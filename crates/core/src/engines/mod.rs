//! Engine parsers: each turns one cleaned physical line into records.

pub mod client;
pub mod common;
pub mod custom;
pub mod gate;
pub mod lmdeploy;
pub mod others;
pub mod prefix;
pub mod prefix_cache;
pub mod sglang;
pub mod trtllm;
pub mod vllm;

use crate::model::Record;

/// Which server wrote the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Engine {
    Sglang,
    Vllm,
    Lmdeploy,
    Trtllm,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
            Engine::Lmdeploy => "lmdeploy",
            Engine::Trtllm => "trtllm",
        }
    }

    pub fn from_name(s: &str) -> Option<Engine> {
        match s.to_ascii_lowercase().as_str() {
            "sglang" => Some(Engine::Sglang),
            "vllm" => Some(Engine::Vllm),
            "lmdeploy" => Some(Engine::Lmdeploy),
            "trtllm" | "tensorrt-llm" | "tensorrt_llm" => Some(Engine::Trtllm),
            _ => None,
        }
    }

    /// Engines tried on every line when none is forced.
    pub const ALL: &'static [Engine] = &[
        Engine::Sglang,
        Engine::Vllm,
        Engine::Lmdeploy,
        Engine::Trtllm,
    ];
}

/// What a parser made of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not this engine's line.
    NotMine,
    /// `full` stats records read in full and `damaged` ones read in part.
    Stats { full: u32, damaged: u32 },
    /// A known line that is not a stats line; the label names its kind.
    Other(&'static str),
    /// A stats line that stops short, as if hard-wrapped: worth joining with the next line.
    Incomplete,
}

/// What a parser makes of a line whatever came before it (see [`LineParser::read_ahead`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ahead {
    /// Stats records read in full or in part (never `Incomplete`).
    Stats { full: u32, damaged: u32 },
    /// Not this engine's line, and the parser's state is untouched.
    NotMine,
    /// As `NotMine`, and an HTTP access line: [`common::classify`] labels it
    /// [`common::ACCESS_LOG`] (told so the reader need not search again), and
    /// the parsers after this one are not asked ([`common::is_access_line`]).
    AccessLine,
    /// A known line that is not a stats line, labelled, whose reading changes
    /// nothing in the parser: `parse` would return `Other(label)`.
    Other(&'static str),
}

/// A parser's stats reading of a line (records pushed from `mark` on) as a
/// reading ahead: complete readings stand, anything else is undone and left to
/// `parse`; a line without stats is the parser's `NotMine` when `untouched` says
/// nothing else of the parser would claim it.
pub(crate) fn ahead_of(
    stats: Option<Outcome>,
    out: &mut Vec<Record>,
    mark: usize,
    untouched: impl FnOnce() -> bool,
) -> Option<Ahead> {
    match stats {
        Some(Outcome::Stats { full, damaged }) => Some(Ahead::Stats { full, damaged }),
        Some(_) => {
            out.truncate(mark);
            None
        }
        None => untouched().then_some(Ahead::NotMine),
    }
}

/// A parser for one engine's log lines. State (e.g. de-duplication of lines
/// every rank prints) lives inside it.
pub trait LineParser: Send {
    fn engine(&self) -> Engine;
    /// Parses one physical line (ANSI codes already removed). Records go to `out`.
    /// `last_chance` is set when the line cannot be joined with a next one, so an
    /// incomplete stats line must be read as damaged instead.
    fn parse(&mut self, line: &[u8], no: u64, last_chance: bool, out: &mut Vec<Record>) -> Outcome;
    /// Reads a line as [`LineParser::parse`] would with `last_chance` unset, but
    /// only where the outcome cannot depend on earlier lines (or change the
    /// parser's state): `None` leaves the line to `parse` in log order. Records
    /// go to `out` with line number 0.
    fn read_ahead(&mut self, _line: &[u8], _out: &mut Vec<Record>) -> Option<Ahead> {
        None
    }
    /// Whether a line starts like a fresh log record (so it is not a wrapped tail).
    fn starts_record(&self, line: &[u8]) -> bool {
        prefix::starts_like_record(line)
    }
}

pub fn parser_for(engine: Engine) -> Parser {
    match engine {
        Engine::Sglang => Parser::Sglang(Box::default()),
        Engine::Vllm => Parser::Vllm(Box::default()),
        Engine::Lmdeploy => Parser::Lmdeploy(lmdeploy::LmdeployParser),
        Engine::Trtllm => Parser::Trtllm(Box::default()),
    }
}

/// One engine's parser, its calls dispatched by a match: direct calls that
/// can be inlined, where a trait object's go through a table (in wasm, an
/// indirect call that V8 does not inline), two or three times a line. Boxed:
/// a parser holds its memos and templates, the enum only a pointer.
pub enum Parser {
    Sglang(Box<sglang::SglangParser>),
    Vllm(Box<vllm::VllmParser>),
    /// Stateless: nothing to box.
    Lmdeploy(lmdeploy::LmdeployParser),
    Trtllm(Box<trtllm::TrtllmParser>),
}

impl LineParser for Parser {
    #[inline]
    fn engine(&self) -> Engine {
        match self {
            Parser::Sglang(_) => Engine::Sglang,
            Parser::Vllm(_) => Engine::Vllm,
            Parser::Lmdeploy(_) => Engine::Lmdeploy,
            Parser::Trtllm(_) => Engine::Trtllm,
        }
    }

    fn parse(&mut self, line: &[u8], no: u64, last_chance: bool, out: &mut Vec<Record>) -> Outcome {
        match self {
            Parser::Sglang(p) => p.parse(line, no, last_chance, out),
            Parser::Vllm(p) => p.parse(line, no, last_chance, out),
            Parser::Lmdeploy(p) => p.parse(line, no, last_chance, out),
            Parser::Trtllm(p) => p.parse(line, no, last_chance, out),
        }
    }

    #[inline]
    fn read_ahead(&mut self, line: &[u8], out: &mut Vec<Record>) -> Option<Ahead> {
        match self {
            Parser::Sglang(p) => p.read_ahead(line, out),
            Parser::Vllm(p) => p.read_ahead(line, out),
            Parser::Lmdeploy(p) => p.read_ahead(line, out),
            Parser::Trtllm(p) => p.read_ahead(line, out),
        }
    }

    fn starts_record(&self, line: &[u8]) -> bool {
        match self {
            Parser::Sglang(p) => p.starts_record(line),
            Parser::Vllm(p) => p.starts_record(line),
            Parser::Lmdeploy(p) => p.starts_record(line),
            Parser::Trtllm(p) => p.starts_record(line),
        }
    }
}

/// The profile of the engine a report names (`sglang`, `vllm`, …).
pub fn profile(engine: &str) -> &'static crate::model::profile::Profile {
    match engine {
        "sglang" => &sglang::profile::PROFILE,
        "vllm" => &vllm::profile::PROFILE,
        "lmdeploy" => &lmdeploy::profile::PROFILE,
        "trtllm" => &trtllm::profile::PROFILE,
        _ => &UNKNOWN,
    }
}

/// The profile a report is judged with: its engine's, or for a log read with a
/// format file, the profile the format borrows (`like = "vllm"`).
pub fn profile_for(r: &crate::report::Report) -> &'static crate::model::profile::Profile {
    let like = r
        .input
        .custom_formats
        .iter()
        .find(|f| f.name == r.engine)
        .and_then(|f| f.like.as_deref());
    profile(like.unwrap_or(&r.engine))
}

/// A log of no known engine is read as vLLM's (paged blocks, nothing reserved),
/// but nothing is said of where its stats lines would come from.
const UNKNOWN: crate::model::profile::Profile = crate::model::profile::Profile {
    stats_lines_hint: None,
    ..vllm::profile::PROFILE
};

#[cfg(test)]
mod profile_checks;

/// What the engine parsers' unit tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{LineParser, Outcome};
    use crate::model::{Record, Sample};

    /// One stats record, read in full.
    pub const ONE_FULL: Outcome = Outcome::Stats {
        full: 1,
        damaged: 0,
    };
    /// One stats record, recognised but read in part.
    pub const ONE_DAMAGED: Outcome = Outcome::Stats {
        full: 0,
        damaged: 1,
    };

    /// `p`'s outcome for `line` (as line 3) and the first sample it pushed.
    pub fn parse_one(
        p: &mut impl LineParser,
        line: &str,
        last_chance: bool,
    ) -> (Outcome, Option<Sample>) {
        let mut out = Vec::new();
        let o = p.parse(line.as_bytes(), 3, last_chance, &mut out);
        let s = out.into_iter().find_map(|r| match r {
            Record::Sample(s) => Some(s),
            _ => None,
        });
        (o, s)
    }
}
