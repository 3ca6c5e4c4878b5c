//! Python reprs as servers print their arguments: `ServerArgs(a=1, …)`, `{'a': 1}`.

/// Iterates `key=value` or `'key': value` pairs of a Python repr
/// (`ServerArgs(a=1, b='x', c=[1, 2])`, `{'a': 1}`, `Namespace(a=1)`), yielding
/// raw value text. Nested brackets and quoted strings are skipped over whole.
pub fn python_pairs(text: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    each_python_pair(text, |k, v| out.push((k, v)));
    out
}

/// [`python_pairs`] handed to `f` one at a time, without collecting them (an
/// iteration log has a dict on every line).
pub fn each_python_pair<'t>(text: &'t [u8], mut f: impl FnMut(&'t [u8], &'t [u8])) {
    let mut pairs = 0;
    let mut i = 0;
    let n = text.len();
    // Skip to the first opening bracket.
    while i < n && text[i] != b'(' && text[i] != b'{' {
        i += 1;
    }
    if i >= n {
        return;
    }
    i += 1;
    while i < n {
        while i < n && (text[i] == b' ' || text[i] == b',') {
            i += 1;
        }
        if i >= n || text[i] == b')' || text[i] == b'}' {
            break;
        }
        // Key: bare identifier or quoted.
        let (ks, ke);
        if text[i] == b'\'' || text[i] == b'"' {
            let q = text[i];
            ks = i + 1;
            let mut j = ks;
            while j < n && text[j] != q {
                j += 1;
            }
            if j >= n {
                // An unterminated quoted key: the line was cut; keep what was read.
                break;
            }
            ke = j;
            i = j + 1;
        } else {
            ks = i;
            while i < n && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            ke = i;
        }
        if ke == ks {
            break;
        }
        while i < n && (text[i] == b' ' || text[i] == b':' || text[i] == b'=') {
            i += 1;
        }
        let vs = i;
        let mut depth = 0i32;
        let mut quote: Option<u8> = None;
        while i < n {
            let c = text[i];
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'\'' | b'"' => quote = Some(c),
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    b',' if depth == 0 => break,
                    _ => {}
                },
            }
            i += 1;
        }
        let ve = i.min(n);
        f(&text[ks..ke], super::fields::trim(&text[vs..ve]));
        pairs += 1;
        if pairs > 4096 {
            break;
        }
    }
}

/// A Python value as a plain string: quotes removed; `None` gives `None`.
pub fn py_str(v: &[u8]) -> Option<String> {
    let v = super::fields::trim(v);
    if v == b"None" || v.is_empty() {
        return None;
    }
    let v = v
        .strip_prefix(b"'")
        .and_then(|s| s.strip_suffix(b"'"))
        .or_else(|| v.strip_prefix(b"\"").and_then(|s| s.strip_suffix(b"\"")))
        .unwrap_or(v);
    Some(String::from_utf8_lossy(v).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reprs_split_into_pairs() {
        let p = python_pairs(b"server_args=ServerArgs(model_path='a,b', tp_size=2, x=[1, 2], mem_fraction_static=0.85, d={'k': (1, 2)}, n=None)");
        let keys: Vec<_> = p
            .iter()
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect();
        assert_eq!(
            keys,
            [
                "model_path",
                "tp_size",
                "x",
                "mem_fraction_static",
                "d",
                "n"
            ]
        );
        assert_eq!(p[0].1, b"'a,b'");
        assert_eq!(p[3].1, b"0.85");
        let d =
            python_pairs(b"non-default args: {'model_tag': 'Qwen/Qwen3-8B', 'max_num_seqs': 128}");
        assert_eq!(d.len(), 2);
        assert_eq!(d[1], (&b"max_num_seqs"[..], &b"128"[..]));
        assert_eq!(py_str(b"'a,b'").as_deref(), Some("a,b"));
        assert_eq!(py_str(b"None"), None);
        // A line cut inside a quoted key keeps the pairs before it and does not panic.
        let cut = python_pairs(b"server_args=ServerArgs(tp_size=2, 'model_pa");
        assert_eq!(cut, vec![(&b"tp_size"[..], &b"2"[..])]);
    }
}
