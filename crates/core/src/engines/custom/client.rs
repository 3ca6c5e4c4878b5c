//! A client's progress lines read with the formats marked `side = "client"`:
//! its figures, to reconcile with the server's log.

use super::{seconds, Counting, Formats, Rate, Side};
use crate::report::ClientFigures;

/// The client figures the client-side formats read from `bytes`, `None` when
/// none of their expressions matches a line. Progress lines print averages so
/// far, so a printed rate is the last one; counts give totals over the window
/// between the first and last timed lines.
pub fn client_figures(bytes: &[u8], formats: &Formats) -> Option<ClientFigures> {
    let mut name = None;
    let (mut first, mut last) = (None::<f64>, None::<f64>);
    let (mut gen_first, mut gen_last, mut gen_sum) = (None::<f64>, None::<f64>, 0.0);
    let (mut done_first, mut done_last) = (None::<f64>, None::<f64>);
    let (mut rate, mut rps, mut prompt) = (None, None, None);
    let mut cumulative = false;
    for line in bytes.split(|&c| c == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        for f in formats.list().iter().filter(|f| f.side == Side::Client) {
            let Some(c) = f.regex.captures(line) else {
                continue;
            };
            name.get_or_insert_with(|| f.name.clone());
            let value = |i: Option<usize>| c.get(i?).and_then(|m| super::number(m.as_bytes()));
            let convert = |v: Option<f64>, r: Rate| match r {
                Rate::TokensPerS => v,
                Rate::MsPerToken => v.filter(|&x| x > 0.0).map(|x| 1000.0 / x),
            };
            let t = f.time.as_ref().and_then(|tf| {
                let m = c.get(f.caps.time?)?;
                tf.read(std::str::from_utf8(m.as_bytes()).ok()?)
            });
            if let Some(t) = t.as_ref().map(seconds) {
                first.get_or_insert(t);
                last = Some(t);
            }
            if let Some(g) = value(f.caps.generated_tokens) {
                cumulative = f.generated_tokens == Counting::Cumulative;
                gen_first.get_or_insert(g);
                gen_last = Some(g);
                gen_sum += g;
            }
            if let Some(n) = value(f.caps.completed_requests) {
                done_first.get_or_insert(n);
                done_last = Some(n);
            }
            rate = convert(value(f.caps.gen_tok_s), f.gen_rate).or(rate);
            prompt = convert(value(f.caps.prompt_tok_s), f.prompt_rate).or(prompt);
            rps = value(f.caps.requests_per_s).or(rps);
            break;
        }
    }
    let name = name?;
    let window = match (first, last) {
        (Some(a), Some(b)) if b > a => Some(b - a),
        _ => None,
    };
    let tokens = match (cumulative, gen_first, gen_last) {
        (true, Some(a), Some(b)) if b >= a => Some(b - a),
        (false, Some(_), _) => Some(gen_sum),
        _ => None,
    };
    let done = match (done_first, done_last) {
        (Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };
    let per_s = |n: Option<f64>| match (n, window) {
        (Some(n), Some(w)) => Some(crate::text::round::sig(n / w)),
        _ => None,
    };
    Some(ClientFigures {
        source: format!("format:{name}"),
        tool: name,
        output_tok_s: rate.or(per_s(tokens)),
        requests_per_s: rps.or(per_s(done)),
        duration_s: window,
        completed_requests: done_last.map(|n| n.round() as u64),
        total_output_tokens: tokens.map(|n| n.round() as u64),
        input_tok_s: prompt,
        ..ClientFigures::default()
    })
}
