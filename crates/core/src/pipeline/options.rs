//! What the caller asks of an analysis.

use crate::engines::Engine;

/// How to analyse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Read only this engine's format (otherwise every known engine is tried).
    pub engine: Option<Engine>,
    /// Skip the diagnosis (the report's `diagnosis` is then `null`).
    pub no_diagnosis: bool,
    /// The client's benchmark figures (`--client` file or flags): fills `report.reconciliation`.
    /// Flags win over a summary block found in the log.
    pub client: Option<crate::report::ClientFigures>,
    /// Of several server runs (restarts), judge this one (1-based) instead of the last.
    pub run: Option<u32>,
    /// Line formats from format files (`--format-file`), tried on the lines no
    /// engine parser claims.
    pub formats: crate::engines::custom::Formats,
    /// The GPU and model (`--gpu`, `--model`): fills `report.roofline`.
    pub roofline: super::roofline::RooflineChoice,
    /// Keep every run and finer series ([`crate::Analyzer::finish_keeping`]): a
    /// front end can then judge another run or zoom without reading again. Costs
    /// memory (bounded: [`super::kept::KEPT_BYTES`] for the runs that ended) and a
    /// little time per line.
    pub keep: bool,
}

/// The engines whose parsers read each line, in order.
pub(crate) fn engines_tried(opts: &Options) -> Vec<Engine> {
    match opts.engine {
        Some(e) => vec![e],
        None => Engine::ALL.to_vec(),
    }
}
