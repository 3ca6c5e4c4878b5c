//! Each engine's profile, checked for what the diagnosis relies on: a lever that
//! takes a value has a `{}` for it, a lever without one has none (it would show
//! in the advice as is), and a lever is there wherever the advice names it.

use super::{lmdeploy, profile, sglang, trtllm, vllm};
use crate::model::profile::{Admission, KvMemory, Lever, PrefillLever, Profile};

const ALL: [(&str, &Profile); 4] = [
    ("sglang", &sglang::profile::PROFILE),
    ("vllm", &vllm::profile::PROFILE),
    ("lmdeploy", &lmdeploy::profile::PROFILE),
    ("trtllm", &trtllm::profile::PROFILE),
];

fn holes(text: &str) -> usize {
    text.matches("{}").count()
}

/// `flag` and `why` each hold that many `{}`; the id and the effect none.
fn check(name: &str, l: &Lever, flag: usize, why: usize) {
    assert!(
        !l.id.is_empty() && !l.flag.is_empty() && !l.why.is_empty(),
        "{name}: {l:?}"
    );
    assert_eq!(holes(l.flag), flag, "{name}: {l:?}");
    assert_eq!(holes(l.why), why, "{name}: {l:?}");
    assert_eq!(holes(l.id) + holes(l.effect), 0, "{name}: {l:?}");
}

#[test]
fn every_lever_has_a_hole_for_its_value_and_no_other() {
    for (name, p) in ALL {
        let l = &p.levers;
        if let Some(w) = &l.with_cap {
            check(name, w, 1, 0);
        }
        if let Some(t) = &l.host_tier {
            check(name, &t.lever, 1, 0);
        }
        if let Some(k) = &l.conservativeness {
            check(name, &k.lower, 1, 0);
            check(name, &k.raise, 1, 0);
        }
        if let Some(c) = &l.capacity_policy {
            check(name, &c.admit_on_blocks, 0, 0);
            check(name, &c.reserve_whole, 0, 0);
        }
        for d in l.decode_saturated {
            check(name, d, 0, 0);
        }
        assert!(!l.decode_saturated.is_empty(), "{name}");
        for f in l.prefill {
            match f {
                PrefillLever::Always(x) | PrefillLever::SharedPrefixes(x) => check(name, x, 0, 0),
                PrefillLever::Budget { lever, .. } => check(name, lever, 1, 1),
                PrefillLever::MoreCompute(x) => check(name, x, 0, 1),
                PrefillLever::PrefixCaching => {
                    assert!(
                        l.prefix_caching.is_some(),
                        "{name}: prefix caching advised without a flag"
                    )
                }
            }
        }
        let texts = [
            l.running_cap,
            l.raise_cap.kv_tight,
            l.raise_cap.room,
            l.client_tool,
            l.fp8_kv.0,
            l.fp8_kv.1,
        ];
        assert!(
            texts.iter().all(|t| !t.is_empty() && holes(t) == 0),
            "{name}"
        );
        let memory = match &l.kv_memory {
            KvMemory::StaticFraction { default, most, .. }
            | KvMemory::WholeGpuFraction { default, most, .. } => (*default, *most),
            KvMemory::ShareOfFree(s) => (s.default, s.most),
        };
        assert!(
            0.0 < memory.0 && memory.0 < memory.1 && memory.1 < 1.0,
            "{name}: {memory:?}"
        );
    }
}

/// What the advice says of reservations fits how the engine admits.
#[test]
fn reservation_words_and_knobs_fit_the_admission() {
    for (name, p) in ALL {
        let reserves = p.admission != Admission::NoReservation;
        assert_eq!(p.reservation.is_some(), reserves, "{name}");
        if let Some(r) = p.reservation {
            assert!(
                r.ends_with("so the pool is full once reservations are counted"),
                "{name}"
            );
        }
        // The knob scales the room kept for future tokens.
        if p.levers.conservativeness.is_some() {
            assert_eq!(p.admission, Admission::ReservesFutureTokens, "{name}");
        }
        // The policy advised against whole-request reservations, and for them against evictions.
        if p.levers.capacity_policy.is_some() {
            assert_eq!(p.admission, Admission::ReservesWholeRequest, "{name}");
        }
    }
}

#[test]
fn a_report_finds_its_engines_profile_and_an_unknown_engine_reads_as_vllm() {
    let debug = |p: &Profile| format!("{p:?}");
    for (name, p) in ALL {
        assert_eq!(debug(profile(name)), debug(p), "{name}");
    }
    let (u, v) = (profile("unknown"), &vllm::profile::PROFILE);
    assert_eq!(u.admission, v.admission);
    assert_eq!(u.eviction, v.eviction);
    assert_eq!(
        (u.pool_per_rank, u.prefill_batches_logged, u.reservation),
        (v.pool_per_rank, v.prefill_batches_logged, v.reservation)
    );
    assert_eq!(format!("{:?}", u.levers), format!("{:?}", v.levers));
    // Nothing said of where its stats lines would come from: it printed none of vLLM's.
    assert!(v.stats_lines_hint.is_some());
    assert_eq!(u.stats_lines_hint, None);
}
