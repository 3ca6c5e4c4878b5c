//! Part of the JSON contract (see the module above): serde types only.

use serde::Serialize;

/// A server other than SGLang and vLLM whose lines the log holds (LMDeploy's
/// or TensorRT-LLM's when none of its stats lines, which are read, is there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherServer {
    /// `LMDeploy`, `TensorRT-LLM`, `TGI`, `TEI`, `llama.cpp`, `Ollama`, `llama-box`, `vllm.rs`.
    pub name: String,
    /// The name after its article (`an Ollama`, `a TGI`), for sentences.
    pub a_name: String,
    /// Lines with its phrases among the unclaimed lines looked at.
    pub lines: u64,
    /// The first such line, and its text.
    pub first_line: u64,
    pub text: String,
    /// What the server logs, and so what its log can show.
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileFormat {
    /// The packing tool (`xz`, `zstd`, `zip`, `tar`, …) when `unpack` is set, else
    /// what the file is, to follow "a" (`PNG image`, `PDF document`, …).
    pub name: String,
    /// The command that writes the file's text to stdout (the file's path goes
    /// last), when the format packs text.
    pub unpack: Option<String>,
}

/// One line format of a `--format-file`, and what it read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CustomFormat {
    pub name: String,
    /// The engine whose profile (admission, evictions, flags) the diagnosis borrows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub like: Option<String>,
    /// `server`, or `client` (read from the `--client` file).
    pub side: String,
    /// Lines its expression matched.
    pub matched_lines: u64,
    /// Samples read from them.
    pub samples: u64,
    /// Matched lines that gave settings only (`kv_capacity_tokens`, `max_running`).
    pub config_lines: u64,
    /// Captured values that were not numbers (or times) as declared.
    pub unread_values: u64,
    /// The first matched line that gave no number, when one did not: why a
    /// format that matches may still read nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_match: Option<crate::report::LineExample>,
}
