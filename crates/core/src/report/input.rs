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
