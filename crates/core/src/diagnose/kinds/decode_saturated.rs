//! Decode itself is saturated: a bigger batch would add little.

use crate::diagnose::actions::lever;
use crate::diagnose::context::Ctx;
use crate::diagnose::evidence::{ev, finish, throughput_evidence};
use crate::report::{Action, Finding, Kind};
use crate::text::num::num;

pub fn decode_saturated(c: &Ctx, confidence: f64) -> Finding {
    let mut evidence = throughput_evidence(c);
    let per = c.facts.per_request_tok_s.unwrap_or(0.0);
    evidence.push(ev(
        format!(
            "{} requests share {} tok/s: {} tok/s per request",
            num(c.run()),
            num(c.w.gen_tok_s.unwrap_or(0.0)),
            num(per)
        ),
        c.line(),
    ));
    if let Some(m) = &c.model {
        evidence.push(ev(format!("Step-time model: {}", m.describe()), Vec::new()));
    }
    Finding {
        kind: Kind::DecodeSaturated,
        confidence,
        headline: format!(
            "Decode is saturated: {} running requests get {} tok/s each; a bigger batch would not add much — faster kernels, quantization or more GPUs would",
            num(c.run()),
            num(per)
        ),
        evidence: finish(c, evidence),
        actions: actions(c),
        predicted_gain: None,
    }
}

fn actions(c: &Ctx) -> Vec<Action> {
    c.p.levers
        .decode_saturated
        .iter()
        .map(|l| lever(c, l, "", "", &[]))
        .collect()
}
