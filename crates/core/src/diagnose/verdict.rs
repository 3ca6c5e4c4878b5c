//! The verdict follows from counterfactuals: the fitted model predicts the steady
//! throughput with each lever relaxed, and the lever that buys the most names the
//! bottleneck. Where none buys [`SATURATED_GAIN`], decode itself is the limit. The rules
//! keep what a model cannot see (too few lines, evictions, other servers); each finding
//! carries the gain of its own lever, and no finding stays whose lever is predicted to
//! buy nothing, so one report never says both "grow the pool" and "send more requests".

use super::context::{confidence, Ctx};
use super::evidence::ev;
use super::kinds;
use crate::analysis::levers::{Lever, LeverGain};
use crate::report::{Action, Finding, Kind, LeverOutcome};
use crate::text::num::{num, pct};
use crate::text::round::dec;

/// Below this predicted gain from any lever, the server runs at its ceiling.
pub const SATURATED_GAIN: f64 = 0.08;
/// A finding whose lever is predicted to buy less than this advises nothing useful.
const NO_GAIN: f64 = 0.03;
/// Fewer stats lines than this are a snapshot.
const SNAPSHOT_LINES: u64 = 3;
/// Fewer than this, and a step model only the prior gives, are too little to weigh levers.
const SHORT_LOG_LINES: u64 = 20;

/// The lever a finding of this kind names.
fn lever_of(kind: Kind) -> Option<Lever> {
    match kind {
        Kind::KvCacheCapacity | Kind::KvRetraction => Some(Lever::KvPool),
        Kind::RunningRequestLimit => Some(Lever::RunningCap),
        Kind::ClientUnderload => Some(Lever::Client),
        Kind::PrefillHeavy => Some(Lever::Prefill),
        Kind::DecodeSaturated | Kind::InsufficientData | Kind::Stalled | Kind::RankImbalance => {
            None
        }
    }
}

/// What a lever buys.
fn gain_of(levers: &[LeverGain], lever: Lever) -> Option<f64> {
    levers.iter().find(|x| x.lever == lever).map(|x| x.gain)
}

/// Reorders (and completes) the rules' findings so that the first is the lever the model
/// says buys the most, and fills each finding's `predicted_gain`.
pub fn choose(c: &Ctx, findings: &mut Vec<Finding>, levers: &[LeverGain]) {
    // A stall or a binding imbalance of ranks is what the model cannot see: it leads.
    if let Some(i) = findings
        .iter()
        .position(|f| f.confidence >= 0.95 && matches!(f.kind, Kind::Stalled | Kind::RankImbalance))
    {
        let f = findings.remove(i);
        findings.insert(0, f);
        return;
    }
    if levers.is_empty() || c.stat_lines == 0 {
        return;
    }
    // The joint lever (cap and client together) is advised where it buys, never the
    // verdict: the bottleneck is what one change relaxes.
    let joint = levers
        .iter()
        .find(|l| l.lever == Lever::CapAndClient)
        .cloned();
    let levers: Vec<LeverGain> = levers
        .iter()
        .filter(|l| l.lever != Lever::CapAndClient)
        .cloned()
        .collect();
    let levers = levers.as_slice();
    if levers.is_empty() {
        return;
    }
    // A snapshot of a line or two fits nothing but the prior: the rules' mechanics decide,
    // and the gains are only reported.
    let best_gain = levers[0].gain;
    let fill = |findings: &mut Vec<Finding>| {
        for f in findings.iter_mut() {
            f.predicted_gain = match lever_of(f.kind) {
                Some(l) => gain_of(levers, l).map(|g| dec(g, 4)),
                None if f.kind == Kind::DecodeSaturated => Some(dec(best_gain.max(0.0), 4)),
                None => None,
            };
            order_actions(&mut f.actions);
        }
    };
    // A short log the step model could not be fitted to has only the prior's split of the
    // step: the mechanics decide there too.
    let unidentified =
        c.stat_lines < SHORT_LOG_LINES && c.model.as_ref().is_some_and(|m| !m.fitted);
    if c.stat_lines < SNAPSHOT_LINES || unidentified {
        fill(findings);
        // Beside the rules' verdict, no finding whose lever buys nothing.
        let lead = findings.first().map(|f| f.kind);
        findings.retain(|f| {
            Some(f.kind) == lead
                || f.kind == Kind::KvRetraction
                || lever_of(f.kind).is_none()
                || f.predicted_gain.is_none_or(|g| g >= NO_GAIN)
        });
        if let Some(p) = findings.first_mut() {
            if let Some(note) = cheap_note(p) {
                p.headline.push_str(&note);
            }
        }
        return;
    }
    let best = &levers[0];
    // Near-ties (within a tenth of the best gain) go to the lever the scheduler's
    // mechanics point at: the rules' strongest finding among them.
    let contenders: Vec<&LeverGain> = levers
        .iter()
        .filter(|l| l.gain >= best.gain - 0.1 * best.gain.abs() && l.gain >= SATURATED_GAIN)
        .collect();
    let chosen = contenders
        .iter()
        .max_by(|a, b| {
            let conf = |l: &LeverGain| {
                findings
                    .iter()
                    .filter(|f| lever_of(f.kind) == Some(l.lever))
                    .map(|f| f.confidence)
                    .fold(0.0, f64::max)
            };
            conf(a).total_cmp(&conf(b)).then(a.gain.total_cmp(&b.gain))
        })
        .copied();
    let second = levers
        .iter()
        .filter(|l| Some(l.lever) != chosen.map(|c| c.lever))
        .map(|l| l.gain)
        .fold(f64::NEG_INFINITY, f64::max);
    let kind = match chosen {
        None => Kind::DecodeSaturated,
        Some(l) => match l.lever {
            // The pool binds: evictions lead where the rules are surer of them than of
            // the pool's admission (they happen often), else the pool's capacity.
            Lever::KvPool => {
                let conf_of = |k: Kind| {
                    findings
                        .iter()
                        .filter(|f| f.kind == k)
                        .map(|f| f.confidence)
                        .fold(f64::NEG_INFINITY, f64::max)
                };
                let (retr, pool) = (conf_of(Kind::KvRetraction), conf_of(Kind::KvCacheCapacity));
                if retr > pool || (pool == f64::NEG_INFINITY && c.retracts_often()) {
                    Kind::KvRetraction
                } else {
                    Kind::KvCacheCapacity
                }
            }
            Lever::RunningCap => Kind::RunningRequestLimit,
            Lever::Client => Kind::ClientUnderload,
            // Not a candidate (see `joint` above).
            Lever::CapAndClient => Kind::ClientUnderload,
            Lever::Prefill => Kind::PrefillHeavy,
        },
    };
    // Sure in proportion to the margin over the next lever.
    let margin = match chosen {
        Some(l) if l.gain > 0.0 => ((l.gain - second.max(0.0)) / l.gain).clamp(0.0, 1.0),
        Some(_) => 0.0,
        None => ((SATURATED_GAIN - best.gain.max(0.0)) / SATURATED_GAIN).clamp(0.0, 1.0),
    };
    let mut conf = confidence(c, 0.6 + 0.3 * margin);
    if c.w.queued.is_none() {
        // Nothing in the log says whether requests wait: no lever is sure.
        conf = conf.min(0.55);
    }

    // Findings whose own lever buys nothing would advise it all the same: they go.
    findings.retain(|f| match lever_of(f.kind) {
        Some(_) if f.kind == kind => true,
        // Evictions are a fact of the log, whatever their lever buys.
        Some(Lever::KvPool) if f.kind == Kind::KvRetraction => true,
        Some(l) => gain_of(levers, l).is_some_and(|g| g >= NO_GAIN),
        // Saturation beside a lever that buys would contradict it.
        None if f.kind == Kind::DecodeSaturated => kind == Kind::DecodeSaturated,
        None => true,
    });
    let primary_at = match findings.iter().position(|f| f.kind == kind) {
        Some(i) => i,
        None => {
            findings.push(match kind {
                Kind::KvRetraction => kinds::retraction(c, conf),
                Kind::KvCacheCapacity => kinds::kv_capacity(c, conf),
                Kind::RunningRequestLimit => kinds::running_limit(c, conf),
                Kind::ClientUnderload => kinds::client(c, conf),
                Kind::PrefillHeavy => kinds::prefill(c, conf),
                _ => kinds::decode_saturated(c, conf),
            });
            findings.len() - 1
        }
    };
    fill(findings);
    let mut primary = findings.remove(primary_at);
    primary.confidence = primary.confidence.max(conf);
    primary.evidence.insert(
        1.min(primary.evidence.len()),
        ev(lever_sentence(c, levers), Vec::new()),
    );
    if let Some(note) = cheap_note(&primary) {
        primary.headline.push_str(&note);
    }
    if let Some(j) = joint.filter(|j| {
        j.gain >= SATURATED_GAIN && j.gain > primary.predicted_gain.unwrap_or(0.0) + NO_GAIN
    }) {
        together(c, &mut primary, &j);
    }
    // The rest by what their levers buy, those without one after.
    findings.sort_by(|a, b| {
        b.predicted_gain
            .unwrap_or(f64::NEG_INFINITY)
            .total_cmp(&a.predicted_gain.unwrap_or(f64::NEG_INFINITY))
            .then(b.confidence.total_cmp(&a.confidence))
    });
    for f in findings.iter_mut() {
        // Never as sure as the verdict.
        f.confidence = f.confidence.min((primary.confidence - 0.01).max(0.0));
    }
    findings.insert(0, primary);
}

/// A client that keeps exactly as many requests in flight as the cap admits gains from
/// neither alone: the verdict says what raising both together buys, and advises it after
/// its own actions (first, where the verdict is that nothing else buys).
fn together(c: &Ctx, primary: &mut Finding, joint: &LeverGain) {
    let mut both = kinds::client(c, primary.confidence).actions;
    both.retain(|a| a.predicted_gain.is_some_and(|g| g >= NO_GAIN));
    if both.is_empty() {
        return;
    }
    let cap = c.cap.unwrap_or(c.run());
    let gain = signed(joint.gain);
    if primary.kind == Kind::DecodeSaturated {
        primary.headline = format!(
            "No single change buys {}: the client keeps exactly as many requests in flight as the running cap admits ({}), so raising either alone changes nothing; raised together they are predicted {gain}",
            pct(SATURATED_GAIN),
            num(cap)
        );
        both.append(&mut primary.actions);
        primary.actions = both;
    } else {
        primary.headline.push_str(&format!(
            "; the client keeps exactly as many in flight as the cap admits ({}): raising both together is predicted {gain}",
            num(cap)
        ));
        primary.actions.append(&mut both);
    }
}

/// The counterfactuals in words, for the verdict's evidence.
fn lever_sentence(c: &Ctx, levers: &[LeverGain]) -> String {
    let parts: Vec<String> = levers
        .iter()
        .map(|l| {
            let what = match l.lever {
                Lever::KvPool => "twice the KV pool".to_string(),
                Lever::RunningCap => format!(
                    "twice the running cap ({})",
                    num(c.cap.unwrap_or(0.0) * 2.0)
                ),
                Lever::Client => "twice the requests in flight".to_string(),
                Lever::Prefill => "prefill at half the cost".to_string(),
                Lever::CapAndClient => "twice the cap and the requests in flight".to_string(),
            };
            format!(
                "{what} {}{} ({} tok/s, {} running)",
                if l.gain < 0.0 { "-" } else { "+" },
                pct(l.gain.abs()),
                num(l.predicted.gen_throughput_tok_s),
                num(l.predicted.running_requests)
            )
        })
        .collect();
    format!("The fitted model, each lever relaxed: {}", parts.join("; "))
}

/// The actions the model can predict are ordered among themselves: those that trade
/// nothing on the server (memory, caps, scheduling) first, then those that trade accuracy
/// or stability (FP8, fewer reservations), then the client's side; each by predicted
/// effect. Actions it cannot predict (a policy, a host tier) keep their places.
fn order_actions(actions: &mut [Action]) {
    let tier = |a: &Action| {
        if a.flag.starts_with("client:") {
            2
        } else if matches!(
            a.id.as_str(),
            "fp8_kv_cache"
                | "schedule_conservativeness"
                | "quantize"
                | "speculative"
                | "fewer_seqs"
        ) {
            1
        } else {
            0
        }
    };
    let slots: Vec<usize> = (0..actions.len())
        .filter(|&i| actions[i].predicted_gain.is_some())
        .collect();
    let mut predicted: Vec<Action> = slots.iter().map(|&i| actions[i].clone()).collect();
    predicted.sort_by(|a, b| {
        tier(a).cmp(&tier(b)).then(
            b.predicted_gain
                .unwrap_or(0.0)
                .total_cmp(&a.predicted_gain.unwrap_or(0.0)),
        )
    });
    for (slot, a) in slots.into_iter().zip(predicted) {
        actions[slot] = a;
    }
}

/// When the verdict's first action is predicted to buy under [`NO_GAIN`] while a later one
/// buys more, the headline says so: nothing cheap helps much, and what does.
fn cheap_note(f: &Finding) -> Option<String> {
    let first = f.actions.first()?.predicted_gain?;
    if first >= NO_GAIN {
        return None;
    }
    let better = f
        .actions
        .iter()
        .filter(|a| a.predicted_gain.is_some_and(|g| g >= NO_GAIN))
        .max_by(|a, b| {
            a.predicted_gain
                .unwrap_or(0.0)
                .total_cmp(&b.predicted_gain.unwrap_or(0.0))
        });
    Some(match better {
        Some(b) => format!(
            "; nothing cheap helps much ({} buys {}), {} is predicted {}",
            f.actions[0].flag,
            signed(first),
            b.flag,
            signed(b.predicted_gain.unwrap_or(0.0))
        ),
        None => format!(
            "; nothing cheap helps much ({} buys {})",
            f.actions[0].flag,
            signed(first)
        ),
    })
}

fn signed(g: f64) -> String {
    format!("{}{}", if g < 0.0 { "-" } else { "+" }, pct(g.abs()))
}

/// The counterfactuals as the report carries them.
pub fn outcomes(levers: &[LeverGain]) -> Vec<LeverOutcome> {
    levers
        .iter()
        .map(|l| LeverOutcome {
            lever: l.lever.as_str(),
            changes: l.changes.clone(),
            predicted_gain: dec(l.gain, 4),
            predicted: l.predicted.clone(),
        })
        .collect()
}
