//! batchlens core: reads LLM inference server logs (SGLang, vLLM, TensorRT-LLM,
//! LMDeploy) from byte chunks and tells why throughput is what it is.
//!
//! No I/O, no printing, no clock: the same code runs natively and in wasm32.
//! The stages, in the order data flows through them, and what each may import,
//! are described in `docs/architecture.md`.
//!
//! ```
//! let mut a = batchlens_core::Analyzer::default();
//! a.feed(b"[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, ");
//! a.feed(b"token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94\n");
//! let report = a.finish();
//! assert_eq!(report.engine, "sglang");
//! assert_eq!(report.input.stat_lines, 1);
//! ```

// Leaves: shared scanners and number formats, and the engine-neutral records.
pub(crate) mod model;
pub(crate) mod text;

// The stages, in the order data flows through them.
pub(crate) mod analysis;
pub(crate) mod diagnose;
pub(crate) mod engines;
pub(crate) mod input;
pub mod render;
pub mod report;
pub(crate) mod timeline;

// The driver that runs the stages over a stream of bytes.
pub(crate) mod pipeline;

pub use engines::Engine;
pub use input::lines::MAX_LINE;
pub use input::pieces::PIECE_BYTES;
pub use pipeline::kept::{Kept, KEPT_BYTES};
pub use pipeline::read_ahead::{Prepared, ReadAhead};
pub use pipeline::roofline::{gpu_names, model_names, set_roofline, ModelChoice, RooflineChoice};
pub use pipeline::{analyze, Analyzer, Options};
pub use render::charts;

/// A what-if value as the flag that sets it on the report's server (`max_running=48` →
/// `--max-running-requests 48`); `None` where no server flag sets it or the log lacks
/// what the value follows from.
pub fn setting_flag(r: &Report, parameter: &str, value: f64) -> Option<String> {
    render::setting_flag(r, &engines::profile_for(r).levers, parameter, value)
}
pub use report::Report;

/// Predicting the steady state after a change of settings (`--what-if`).
pub mod whatif {
    pub use crate::analysis::whatif::{parse_change, PARAMETERS};
    use crate::report::Report;
    pub use crate::report::{Baseline, Change, Prediction, RestartCheck, WhatIf};

    /// Predicts the effect of `changes` on the judged run of `r`, with the model
    /// fitted to it (`None` when the log has too little to fit it to, or when the
    /// what-if is [`withheld`]).
    pub fn predict(r: &Report, changes: &[Change]) -> Option<WhatIf> {
        if withheld(r).is_some() {
            return None;
        }
        crate::analysis::whatif::predict(r, crate::engines::profile_for(r), changes)
    }

    /// Why no what-if is offered for `r` (its verdict is `stalled`), in words a front
    /// end can show; `None` where one is.
    pub fn withheld(r: &Report) -> Option<&'static str> {
        crate::diagnose::what_if_withheld(r)
    }
}

/// Two server runs compared (`batchlens compare`): each judged on its own steady
/// window, the settings that differ, whether the workloads match, the effect on
/// generation throughput with its range, and the model fitted on `before` asked
/// about `after`'s settings.
pub fn compare(before: &Report, after: &Report) -> report::Comparison {
    let mut c = analysis::compare::compare(before, after, engines::profile(&before.engine));
    let verdict = |r: &Report| {
        r.diagnosis
            .as_ref()
            .map(|d| d.primary.kind.as_str().to_string())
    };
    c.before.verdict = verdict(before);
    c.after.verdict = verdict(after);
    c.explanation = render::compare_explanation(&c);
    c
}

/// The client's side: benchmark summaries (`bench_serving`, `vllm bench serve`)
/// and per-request `Finish:` lines.
pub mod client {
    pub use crate::engines::client::{
        parse_client_file, parse_finish, parse_save_result, Finished,
    };
    pub use crate::report::{ClientFigures, RequestStats};
}

/// Line formats defined in format files (`--format-file`): TOML or JSON, each a
/// regular expression whose named captures are sample fields (docs/formats.md).
pub mod formats {
    pub use crate::engines::custom::client::client_figures;
    pub use crate::engines::custom::{builtin, FormatError, Formats, BUILTIN, CAPTURES};
}

/// The engines' line readers, for tools that read lines one at a time.
pub mod parse {
    pub use crate::engines::{parser_for, LineParser, Outcome};
}
