//! The format files shipped in `formats/`, embedded, selectable by name
//! (`--format-file llama.cpp`).

/// Each built-in format file: its name and text.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "llama.cpp",
        include_str!("../../../../../formats/llama.cpp.toml"),
    ),
    ("ollama", include_str!("../../../../../formats/ollama.toml")),
    ("tgi", include_str!("../../../../../formats/tgi.toml")),
];

/// The text of the built-in format file `name` (case-insensitive; `llamacpp` too).
pub fn builtin(name: &str) -> Option<&'static str> {
    let want = name.to_ascii_lowercase().replace(['.', '-', '_'], "");
    BUILTIN
        .iter()
        .find(|(n, _)| n.replace('.', "") == want)
        .map(|(_, t)| *t)
}
