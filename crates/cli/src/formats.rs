//! `--format-file`: format files read from disk, or the built-in ones by name.

use std::path::Path;

use batchlens_core::formats::{builtin, Formats, BUILTIN};

use crate::Failure;

/// The formats of every `--format-file` given, in order. A name that is no
/// file but a built-in format (`llama.cpp`) is the built-in one.
pub fn load(specs: &[String]) -> Result<Formats, Failure> {
    let mut all = Formats::default();
    for spec in specs {
        let path = Path::new(spec);
        let (text, shown) = if path.is_file() {
            let bytes = std::fs::read(path).map_err(|e| {
                Failure::input(format!("cannot read the format file '{spec}': {e}"))
            })?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Failure::input(format!("the format file '{spec}' is not UTF-8 text"))
            })?;
            (text, spec.clone())
        } else if let Some(t) = builtin(spec) {
            (t.to_string(), format!("built-in format '{spec}'"))
        } else {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(Failure::input(format!(
                "--format-file {spec}: no such file, and no built-in format of that name (built in: {})",
                names.join(", ")
            )));
        };
        let f = Formats::parse(&text).map_err(|e| Failure::input(format!("{shown}: {e}")))?;
        all.extend(f);
    }
    Ok(all)
}
