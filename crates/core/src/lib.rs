//! batchlens core: reads LLM inference server logs (SGLang, vLLM) from byte
//! chunks and tells why throughput is what it is.
//!
//! No I/O, no printing, no clock: the same code runs natively and in wasm32.
//!
//! ```
//! let mut a = batchlens_core::Analyzer::default();
//! a.feed(b"[2026-02-24 10:55:32 TP0] Decode batch, #running-req: 56, #token: 81290, ");
//! a.feed(b"token usage: 0.70, cuda graph: True, gen throughput (token/s): 888.95, #queue-req: 94\n");
//! let report = a.finish();
//! assert_eq!(report.engine, "sglang");
//! assert_eq!(report.input.stat_lines, 1);
//! ```

mod access_layouts;
pub mod analyzer;
pub mod charts;
pub mod client;
pub mod config;
pub mod cri;
pub mod diagnose;
mod encoding;
pub mod engines;
pub mod fields;
pub mod file_format;
mod gate;
pub mod json_lines;
pub mod lines;
pub mod model;
pub mod other_servers;
pub mod pieces;
pub mod read_ahead;
pub mod reconcile;
pub mod render;
pub mod report;
pub mod round;
pub mod series;
pub mod stats;
pub mod time;
pub mod timeline;
pub mod whatif;

pub use analyzer::{analyze, Analyzer, Options};
pub use engines::Engine;
pub use read_ahead::{Prepared, ReadAhead};
pub use report::Report;
