//! The verdict and the what-if are one model: on every fixture and on a fixed set of
//! simulated workloads, the verdict's lever is the one the model says buys the most, its
//! `predicted_gain` is what `--what-if` predicts for that lever, no finding advises a
//! lever predicted to buy nothing, and a verdict whose first action buys under 3 % says
//! that nothing cheap helps.
// Tests read the bundled fixture logs from disk and print tables (the library does neither).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::disallowed_macros
)]

use std::path::{Path, PathBuf};

use batchlens_core::report::Kind;
use batchlens_core::{analyze, whatif, Options, Report};
use batchlens_sim::sweep::{measure, subset, Lever};

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            logs(&p, out);
        } else if p.extension().is_some_and(|x| x == "log") {
            out.push(p);
        }
    }
}

fn lever_name(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::KvCacheCapacity | Kind::KvRetraction => Some("kv_pool"),
        Kind::RunningRequestLimit => Some("running_cap"),
        Kind::ClientUnderload => Some("client_concurrency"),
        Kind::PrefillHeavy => Some("prefill_cost"),
        _ => None,
    }
}

/// The invariants of one report; `name` for the messages.
fn check(name: &str, r: &Report) {
    let Some(d) = &r.diagnosis else { return };
    let p = &d.primary;
    // A verdict whose first action buys under 3 % says so in its headline.
    if let Some(g) = p.actions.first().and_then(|a| a.predicted_gain) {
        if lever_name(p.kind).is_some() && g < 0.03 {
            assert!(
                p.headline.contains("nothing cheap helps"),
                "{name}: first action {} buys {g}: {}",
                p.actions[0].flag,
                p.headline
            );
        }
    }
    // The client's advice is the lever's own change: twice what it keeps in flight.
    if p.kind == Kind::ClientUnderload {
        if let (Some(a), Some(own)) = (p.actions.first(), p.predicted_gain) {
            if let Some(g) = a.predicted_gain.filter(|_| a.id == "client_concurrency") {
                assert!(
                    (g - own).abs() < 0.05 * own.abs().max(1.0),
                    "{name}: {} buys {g}, the verdict's lever {own}",
                    a.flag
                );
            }
        }
    }
    // No finding advises a lever the model says buys nothing (evictions are a fact).
    for f in &d.findings {
        if let (Some(_), Some(g)) = (lever_name(f.kind), f.predicted_gain) {
            if f.kind != Kind::KvRetraction && f.kind != p.kind {
                assert!(
                    g >= 0.03,
                    "{name}: {:?} beside the verdict buys {g}",
                    f.kind
                );
            }
        }
    }
    // Judged by the levers (enough lines; no stall or imbalance the rules put first).
    if d.levers.is_empty() || r.input.stat_lines < 20 {
        return;
    }
    let best = d
        .levers
        .iter()
        .map(|l| l.predicted_gain)
        .fold(f64::NEG_INFINITY, f64::max);
    match p.kind {
        Kind::DecodeSaturated => assert!(best < 0.08, "{name}: saturated, yet a lever buys {best}"),
        k => {
            let Some(lever) = lever_name(k) else { return };
            let own = p.predicted_gain.expect("the verdict's gain");
            assert!(
                own >= best - 0.1 * best.abs() - 1e-9,
                "{name}: {k:?} buys {own}, a lever buys {best}"
            );
            // `--what-if` with the lever's own change predicts the same gain.
            let l = d
                .levers
                .iter()
                .filter(|l| {
                    l.lever == lever
                        || (k == Kind::ClientUnderload && l.lever == "running_cap_and_client")
                })
                .max_by(|a, b| a.predicted_gain.total_cmp(&b.predicted_gain))
                .expect("the verdict's lever");
            let w = whatif::predict(r, &l.changes).expect("a prediction");
            let g = w.predicted.gen_throughput_tok_s / w.baseline.gen_throughput_tok_s - 1.0;
            assert!(
                (g - own).abs() < 0.01,
                "{name}: predicted_gain {own}, what-if {g}"
            );
        }
    }
}

#[test]
fn every_fixture_keeps_the_verdict_and_the_what_if_one_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut files = Vec::new();
    logs(&root, &mut files);
    logs(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples"),
        &mut files,
    );
    assert!(files.len() > 90, "{}", files.len());
    for f in files {
        let r = analyze(&std::fs::read(&f).unwrap(), Options::default());
        check(&f.display().to_string(), &r);
    }
}

/// A fixed set of the sweep's random workloads (`bench/levers.py` runs hundreds): the
/// invariants on each, and the verdict's lever against the simulator's, each lever relaxed.
#[test]
fn simulated_workloads_keep_the_invariants_and_mostly_name_the_best_lever() {
    let cfgs = subset(12);
    let mut agree = 0;
    for (k, cfg) in cfgs.iter().enumerate() {
        let mut text = String::new();
        batchlens_sim::simulate(cfg, &mut |l| {
            text.push_str(l);
            text.push('\n');
        });
        let r = analyze(text.as_bytes(), Options::default());
        check(&format!("subset {k}"), &r);
        let (_, g) = measure(cfg);
        let best = Lever::ALL
            .into_iter()
            .map(|l| g.get(l))
            .fold(f64::NEG_INFINITY, f64::max);
        let kind = r.diagnosis.as_ref().unwrap().primary.kind;
        let lever = match kind {
            Kind::KvCacheCapacity | Kind::KvRetraction => Some(Lever::Kv),
            Kind::RunningRequestLimit => Some(Lever::Cap),
            Kind::ClientUnderload => Some(Lever::Client),
            Kind::PrefillHeavy => Some(Lever::Prefill),
            _ => None,
        };
        let ok = match lever {
            Some(l) => g.get(l) >= 0.75 * best || best < 0.08,
            None => best < 0.08,
        };
        println!(
            "subset {k}: {kind:?} {g:?} {}",
            if ok { "agrees" } else { "DISAGREES" }
        );
        agree += ok as usize;
    }
    // The 500-run sweep agrees in ~85 % (docs/model.md); twelve runs, at least nine.
    assert!(agree >= 9, "{agree} of {} agree", cfgs.len());
}
