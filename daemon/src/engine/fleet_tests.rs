//! A fleet's parts in the engine: a share scales every rate and burst, a smaller share keeps
//! no more than its part of the burst, no share grants nothing yet estimates waits at the floor,
//! slots bound concurrency, demand counts grants and the queue, and cooldowns are shared once.

use super::tests::*;
use super::*;

fn part(share: f64, floor: f64, slots: Option<u64>) -> FleetPart {
    FleetPart {
        share,
        floor,
        slots,
        line: false,
    }
}

/// The share key "k" wants of a one-second slice at `ms`.
fn wanted_share(fx: &mut Fx, ms: u64) -> f64 {
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(ms));
    wants.iter().find(|w| w.key == "k").expect("wanted").share
}

/// Grants of one request each at `ms`, until one is refused (max_wait 0).
fn grants_now(fx: &mut Fx, key: &str, ms: u64) -> usize {
    let mut n = 0;
    while let Acquired::Granted(_) = fx.acquire(key, 0, 0, 0, ms) {
        n += 1;
        assert!(n < 10_000);
    }
    n
}

#[test]
fn a_share_scales_the_burst_and_the_refill() {
    // 600 a minute (10/s), burst 10; a third of it: a burst of 3.3 and 3.3 a second.
    let mut fx = rpm600_burst10().filled();
    fx.e.set_fleet_default(Some(part(1.0 / 3.0, 1.0 / 3.0, None)), fx.now(0));
    assert_eq!(
        grants_now(&mut fx, "k", 0),
        3,
        "a third of a full burst of 10"
    );
    // Three seconds later: 10 more units at a third of 10/s, capped at the part of the burst.
    assert_eq!(grants_now(&mut fx, "k", 3_000), 3);
    assert_eq!(
        grants_now(&mut fx, "k", 3_300),
        1,
        "0.3 s at 3.3/s plus what was left"
    );
}

#[test]
fn a_smaller_share_keeps_no_more_than_its_part_and_a_larger_one_refills_faster() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.2, 0.2, None), fx.now(0)));
    assert!((fx.level("k", Dimension::Requests, 0) - 2.0).abs() < 1e-9);
    assert!(fx.e.set_fleet_part("k", part(1.0, 0.2, None), fx.now(0)));
    // The level does not jump with the share; it refills at the whole rate from here.
    assert!((fx.level("k", Dimension::Requests, 0) - 2.0).abs() < 1e-9);
    assert!((fx.level("k", Dimension::Requests, 500) - 7.0).abs() < 1e-6);
}

#[test]
fn no_share_grants_nothing_but_a_waiter_waits_for_the_floor() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.0, 0.5, None), fx.now(0)));
    assert_eq!(grants_now(&mut fx, "k", 0), 0);
    // Estimated at half the rate (5/s): queued, not refused as late.
    let w = waiter(&fx.acquire("k", 0, 0, 1_000, 0));
    fx.e.pump(fx.now(100));
    assert!(
        fx.e.drain_answers().is_empty(),
        "nothing granted at share 0"
    );
    // The fleet gives this host half: the waiter goes once its part refilled a unit.
    assert!(fx.e.set_fleet_part("k", part(0.5, 0.5, None), fx.now(100)));
    fx.e.pump(fx.now(301));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![w]);
}

#[test]
fn slots_bound_concurrency_below_the_keys_maximum() {
    let l = KeyLimits {
        max_concurrency: Some(10),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("c", l)]);
    assert!(fx.e.set_fleet_part("c", part(1.0, 1.0, Some(2)), fx.now(0)));
    assert_eq!(grants_now(&mut fx, "c", 0), 2);
    assert_eq!(fx.key_status("c", 0).fleet.and_then(|p| p.slots), Some(2));
    assert!(fx
        .e
        .set_fleet_part("c", part(1.0, 1.0, Some(50)), fx.now(1)));
    assert_eq!(
        grants_now(&mut fx, "c", 1),
        8,
        "never above the key's own 10"
    );
}

#[test]
fn a_starting_part_that_names_no_slots_splits_concurrency_by_its_share() {
    let l = KeyLimits {
        max_concurrency: Some(10),
        ..KeyLimits::default()
    };
    let mut fx = Fx::new(vec![("c", l)]);
    fx.e.set_fleet_default(Some(FleetPart::even(3, None)), fx.now(0));
    assert_eq!(fx.key_status("c", 0).fleet.and_then(|p| p.slots), Some(3));
    assert_eq!(grants_now(&mut fx, "c", 0), 3);
}

#[test]
fn demand_counts_recent_grants_and_the_queue_on_the_key_and_its_ancestors() {
    let mut fx = Fx::new(vec![
        ("p", limits(vec![rate(Dimension::Requests, 600.0, 10.0)])),
        (
            "p/m",
            limits(vec![rate(Dimension::Requests, 6_000.0, 100.0)]),
        ),
    ])
    .filled();
    // 10 granted now on p/m (p's burst), the 11th refused (answer at once), 5 more wait.
    assert_eq!(grants_now(&mut fx, "p/m", 0), 10);
    for _ in 0..5 {
        waiter(&fx.acquire("p/m", 0, 0, 60_000, 0));
    }
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(500));
    let of = |k: &str| wants.iter().find(|w| w.key == k).expect("wanted");
    // p: 11 asked for in the last 0.5 s (10 granted and 1 refused: 22/s) plus 5 queued,
    // against 10 a second.
    assert!((of("p").share - 2.7).abs() < 1e-6, "{:?}", of("p"));
    // p/m: the same against 100 a second.
    assert!((of("p/m").share - 0.27).abs() < 1e-6, "{:?}", of("p/m"));
    assert_eq!(of("p").slots, 15, "10 in flight and 5 waiting");
    assert_eq!(of("p").in_flight, 10);
}

#[test]
fn a_key_whose_clients_stopped_wants_nothing_while_one_in_flight_or_asking_still_wants() {
    // Five granted at 0 ms and answered at 10 ms: 10 a second lately, nothing in flight.
    let mut fx = rpm600_burst10();
    let leases: Vec<String> = (0..5)
        .map(|_| lease(&fx.acquire("k", 0, 0, 0, 0)))
        .collect();
    for id in &leases {
        fx.e.report(id, &ok(200), fx.now(10)).expect("report");
    }
    // 50 ms after its last grant (under the 100 ms floor of two gaps): its recent rate is
    // what it wants.
    assert!(wanted_share(&mut fx, 50) > 0.0, "still asking");
    // 500 ms after it, more than two gaps at 10 a second: it stopped.
    assert_eq!(wanted_share(&mut fx, 500), 0.0, "stopped");

    // The same grants still in flight: its clients have not stopped.
    let mut fx = rpm600_burst10();
    for _ in 0..5 {
        lease(&fx.acquire("k", 0, 0, 0, 0));
    }
    assert!(wanted_share(&mut fx, 500) > 0.0, "in flight");

    // Answered, but one more waits: it wants its rate and the waiter.
    let mut fx = rpm600_burst10();
    let leases: Vec<String> = (0..10)
        .map(|_| lease(&fx.acquire("k", 0, 0, 0, 0)))
        .collect();
    for id in &leases {
        fx.e.report(id, &ok(200), fx.now(10)).expect("report");
    }
    waiter(&fx.acquire("k", 0, 0, 60_000, 20));
    assert!(wanted_share(&mut fx, 500) > 0.1, "a waiter and the rate");
}

#[test]
fn a_key_refused_for_want_of_a_part_wants_one() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.0, 0.5, None), fx.now(0)));
    // Clients that ask to be answered at once are refused: nothing waits, nothing is in
    // flight, nothing was granted, yet the key is wanted.
    assert_eq!(grants_now(&mut fx, "k", 0), 0);
    assert_eq!(grants_now(&mut fx, "k", 20), 0);
    assert!(wanted_share(&mut fx, 40) > 0.0);
}

#[test]
fn a_client_retrying_fast_is_wanted_no_more_than_an_even_split() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.0, 0.5, None), fx.now(0)));
    // A hundred refusals in 100 ms: 1,000 a second against 10, yet one request at a time.
    for ms in 0..100 {
        assert_eq!(grants_now(&mut fx, "k", ms), 0);
    }
    let share = wanted_share(&mut fx, 100);
    assert!(share > 0.0 && share <= 0.5 + 1e-9, "{share}");
}

#[test]
fn a_refusal_after_a_long_busy_stretch_reads_as_one_refusal() {
    let mut fx = rpm600_burst10().filled();
    // Granted from 0 ms on, then nothing granted for a while.
    let leases: Vec<String> = (0..10)
        .map(|_| lease(&fx.acquire("k", 0, 0, 0, 0)))
        .collect();
    for id in &leases {
        fx.e.report(id, &ok(200), fx.now(10)).expect("report");
    }
    assert!(fx
        .e
        .set_fleet_part("k", part(0.0, 0.5, None), fx.now(20_000)));
    // One refusal 20 s later: about one a second over the window, a tenth of the key, not a
    // burst measured from the refusal itself.
    assert_eq!(grants_now(&mut fx, "k", 20_000), 0);
    let share = wanted_share(&mut fx, 20_050);
    assert!(share > 0.0 && share < 0.2, "{share}");
}

#[test]
fn waiting_out_a_cooldown_is_no_demand() {
    let mut fx = rpm600_burst10().filled();
    fx.e.cooldown("k", Duration::from_secs(30), "maintenance", fx.now(0))
        .expect("cooldown");
    // Refused at once for the cooldown, and one that waited and timed out behind it.
    assert!(matches!(
        fx.acquire("k", 0, 0, 0, 0),
        Acquired::NotGranted(r) if r.code == RefusalCode::Cooldown
    ));
    let w = waiter(&fx.acquire("k", 0, 0, 60_000, 0));
    let r = fx.e.time_out(w, fx.now(50)).expect("timed out");
    assert_eq!(r.code, RefusalCode::Cooldown);
    assert_eq!(wanted_share(&mut fx, 60), 0.0);
}

#[test]
fn a_wait_for_capacity_that_ran_out_is_demand_and_a_caller_gone_is_not() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.0, 0.5, None), fx.now(0)));
    let w = waiter(&fx.acquire("k", 0, 0, 60_000, 0));
    assert!(fx.e.cancel(w, fx.now(10)).is_some());
    assert_eq!(wanted_share(&mut fx, 20), 0.0, "the caller went away");
    let w = waiter(&fx.acquire("k", 0, 0, 60_000, 30));
    let r = fx.e.time_out(w, fx.now(40)).expect("timed out");
    assert_eq!(r.code, RefusalCode::Capacity);
    assert!(wanted_share(&mut fx, 50) > 0.0, "its wait ran out");
}

#[test]
fn clients_pausing_between_batches_are_not_taken_as_stopped() {
    let mut fx = rpm600_burst10();
    // A batch of five each second, answered 300 ms later.
    for at in [0, 1_000] {
        let leases: Vec<String> = (0..5)
            .map(|_| lease(&fx.acquire("k", 0, 0, 0, at)))
            .collect();
        for id in &leases {
            fx.e.report(id, &ok(200), fx.now(at + 300)).expect("report");
        }
    }
    // 600 ms into the pause (more than two gaps at its mean rate, less than twice its longest
    // pause): still its clients' demand.
    assert!(
        wanted_share(&mut fx, 1_600) > 0.0,
        "a pause between batches"
    );
}

#[test]
fn a_key_kept_local_is_not_shared() {
    let l = KeyLimits {
        local_only: true,
        ..limits(vec![rate(Dimension::Requests, 600.0, 10.0)])
    };
    let mut fx = Fx::new(vec![("mine", l)]).filled();
    fx.e.set_fleet_default(Some(part(0.0, 0.5, None)), fx.now(0));
    assert!(!fx.e.set_fleet_part("mine", part(0.1, 0.1, None), fx.now(0)));
    assert!(fx
        .e
        .fleet_wants(Duration::from_secs(1), fx.now(0))
        .is_empty());
    assert_eq!(grants_now(&mut fx, "mine", 0), 10, "the whole burst");
}

#[test]
fn a_learned_key_starts_with_the_fleets_starting_part() {
    let mut fx = Fx::new(vec![]);
    fx.e.set_fleet_default(Some(part(0.25, 0.25, None)), fx.now(0));
    let g = lease(&fx.acquire("new", 0, 0, 0, 0));
    let headers = [
        ("x-ratelimit-limit-requests", "600"),
        ("x-ratelimit-remaining-requests", "400"),
    ];
    fx.e.report(&g, &with_headers(200, &headers, T0_UNIX), fx.now(1))
        .expect("report");
    let st = fx.key_status("new", 1);
    assert_eq!(st.fleet.map(|p| p.share), Some(0.25));
    // The provider's remaining is the whole fleet's: a quarter of it is this host's.
    assert!(st.buckets[0].bucket.level <= 100.0 + 1e-9, "{st:?}");
}

#[test]
fn headers_another_host_saw_teach_limits_here_and_count_as_a_change() {
    let mut fx = Fx::new(vec![]);
    fx.e.set_fleet_default(Some(part(0.5, 0.5, None)), fx.now(0));
    fx.acquire("k", 0, 0, 0, 0);
    let before = fx.e.fleet_wants(Duration::from_secs(1), fx.now(0));
    assert_eq!(before.len(), 1, "k asks the fleet for headers: {before:?}");
    assert_eq!((before[0].share, before[0].headers_seq), (0.0, 0));
    let headers = vec![
        ("x-ratelimit-limit-requests".to_string(), "600".to_string()),
        (
            "x-ratelimit-remaining-requests".to_string(),
            "590".to_string(),
        ),
    ];
    let seq = fx.e.apply_shared_headers("k", &headers, fx.now(10));
    assert_eq!(seq, Some(1));
    let st = fx.key_status("k", 10);
    assert_eq!(st.buckets[0].bucket.limit, 600.0, "{st:?}");
    assert_eq!(st.last_headers.len(), 2);
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(10));
    assert_eq!((wants[0].key.as_str(), wants[0].headers_seq), ("k", 1));
    assert_eq!(
        fx.e.apply_shared_headers("unknown", &headers, fx.now(10)),
        None
    );
}

#[test]
fn cooldowns_installed_here_are_shared_once_and_ones_heard_are_not_shared_again() {
    let mut fx = rpm600_burst10().filled();
    assert!(
        fx.e.take_shared_cooldowns().is_empty(),
        "off outside a fleet"
    );
    fx.e.cooldown("k", Duration::from_secs(1), "before the fleet", fx.now(0))
        .expect("cooldown");
    assert!(fx.e.take_shared_cooldowns().is_empty());
    fx.e.set_fleet_default(Some(part(1.0, 1.0, None)), fx.now(0));
    let g = lease(&fx.acquire("k", 0, 0, 0, 1_000));
    fx.e.report(
        &g,
        &with_headers(429, &[("retry-after", "2")], T0_UNIX + 1_000),
        fx.now(1_001),
    )
    .expect("report");
    let shared = fx.e.take_shared_cooldowns();
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert_eq!(shared[0].key, "k");
    assert!(shared[0].until_unix_ms >= T0_UNIX + 3_001, "{shared:?}");
    assert!(fx.e.take_shared_cooldowns().is_empty(), "taken once");

    // One heard from another host holds this host too, and is not sent back.
    let until = T0_UNIX + 10_000;
    assert!(fx
        .e
        .apply_shared_cooldown("k", until, "429 (from host b)", fx.now(2_000))
        .expect("applied"));
    assert!(fx.e.take_shared_cooldowns().is_empty());
    assert!(
        matches!(fx.acquire("k", 0, 0, 0, 5_000), Acquired::NotGranted(r) if r.code == RefusalCode::Cooldown)
    );
    // An older one changes nothing.
    assert!(!fx
        .e
        .apply_shared_cooldown("k", until - 5_000, "older", fx.now(2_000))
        .expect("applied"));
}

#[test]
fn burst_given_back_is_never_counted_twice_and_burst_taken_is_added() {
    // 600 a minute, burst 10; this host holds half, full: 5 units.
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.5, 0.5, None), fx.now(0)));
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(0));
    assert_eq!(wants[0].fill[Dimension::Requests.index()], 1.0);
    // It said it was full, then granted 2 before the answer came: the fleet banked 5 - 2 = 3
    // units above its new part of 0.2 (2 units); it has 3 left, of which 2 fit the new part
    // and 1 was banked already.
    assert_eq!(grants_now_n(&mut fx, "k", 2, 0), 2);
    let x = BurstExchange {
        before: 0.5,
        fill: wants[0].fill,
        taken: [0.0; 4],
    };
    assert!(fx
        .e
        .exchange_fleet_part("k", part(0.2, 0.5, None), Some(x), fx.now(0)));
    assert!((fx.level("k", Dimension::Requests, 0) - 0.0).abs() < 1e-9);
    // Growing to 0.6 and taking 0.3 of the burst from the bank: 3 units at once.
    let x = BurstExchange {
        before: 0.2,
        fill: [0.0; 4],
        taken: [0.3, 0.0, 0.0, 0.0],
    };
    assert!(fx
        .e
        .exchange_fleet_part("k", part(0.6, 0.5, None), Some(x), fx.now(0)));
    assert!((fx.level("k", Dimension::Requests, 0) - 3.0).abs() < 1e-9);
}

#[test]
fn burst_a_renewal_may_bank_is_not_granted_before_the_answer() {
    // 600 a minute, burst 10; this host holds a third (3.3 units), full, and its clients
    // wanted nothing when it renewed: the fleet may give it nothing and bank all it held.
    let mut fx = rpm600_burst10().filled();
    assert!(fx
        .e
        .set_fleet_part("k", part(1.0 / 3.0, 1.0 / 3.0, None), fx.now(0)));
    let fill = fx.e.fleet_offer("k", 0.0, fx.now(0)).expect("offered");
    assert_eq!(fill[Dimension::Requests.index()], 1.0);
    // Its clients' first requests, while the renewal is on its way: none is granted from
    // what the fleet may give another host.
    assert_eq!(grants_now(&mut fx, "k", 1), 0);
    let x = BurstExchange {
        before: 1.0 / 3.0,
        fill,
        taken: [0.0; 4],
    };
    assert!(fx
        .e
        .exchange_fleet_part("k", part(0.0, 1.0 / 3.0, None), Some(x), fx.now(2)));
    // Banked whole and spent nowhere: no debt here, and nothing granted twice.
    let level = fx.level("k", Dimension::Requests, 2);
    assert!(level.abs() < 1e-9, "{level}");

    // Wanting a fifth, it keeps a fifth of the burst to grant from meanwhile (2 units), and
    // given that fifth it owes nothing for them.
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.5, 0.5, None), fx.now(0)));
    let fill = fx.e.fleet_offer("k", 0.2, fx.now(0)).expect("offered");
    assert_eq!(grants_now(&mut fx, "k", 0), 2);
    let x = BurstExchange {
        before: 0.5,
        fill,
        taken: [0.0; 4],
    };
    assert!(fx
        .e
        .exchange_fleet_part("k", part(0.2, 0.5, None), Some(x), fx.now(0)));
    let level = fx.level("k", Dimension::Requests, 0);
    assert!(level.abs() < 1e-9, "{level}");

    // No answer at all: what was set aside is back at the next round.
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", part(0.5, 0.5, None), fx.now(0)));
    fx.e.fleet_offer("k", 0.0, fx.now(0)).expect("offered");
    assert_eq!(grants_now(&mut fx, "k", 0), 0);
    fx.e.fleet_wants(Duration::from_secs(1), fx.now(0));
    assert_eq!(grants_now(&mut fx, "k", 0), 5);
}

/// Takes `n` grants at `ms` (each must be granted at once).
fn grants_now_n(fx: &mut Fx, key: &str, n: usize, ms: u64) -> usize {
    (0..n)
        .filter(|_| matches!(fx.acquire(key, 0, 0, 0, ms), Acquired::Granted(_)))
        .count()
}

#[test]
fn a_key_learned_under_a_shared_one_holds_what_the_ancestors_part_holds_once_given_a_part() {
    let mut fx = Fx::new(vec![(
        "p",
        limits(vec![rate(Dimension::Tokens, 1_200_000.0, 100_000.0)]),
    )])
    .filled();
    assert!(fx
        .e
        .set_fleet_part("p", part(1.0 / 3.0, 1.0 / 3.0, None), fx.now(0)));
    fx.e.set_fleet_default(Some(part(0.0, 1.0 / 3.0, None)), fx.now(0));
    let g = lease(&fx.acquire("p/m", 1000, 0, 0, 10));
    assert_eq!(fx.key_status("p/m", 10).fleet.map(|p| p.share), Some(0.0));
    // The provider names the same quota for the model, its remaining drained by other hosts.
    let headers = [
        ("x-ratelimit-limit-tokens", "1200000"),
        ("x-ratelimit-remaining-tokens", "600"),
        ("x-ratelimit-reset-tokens", "5s"),
    ];
    fx.e.report(&g, &with_headers(200, &headers, T0_UNIX + 60), fx.now(60))
        .expect("report");
    assert_eq!(fx.level("p/m", Dimension::Tokens, 60), 0.0, "no part yet");
    // Given the whole of the model's quota (the first host to ask), it holds no more than
    // its part of the parent's: the same quota is never counted twice.
    assert!(fx
        .e
        .set_fleet_part("p/m", part(1.0, 1.0 / 3.0, None), fx.now(70)));
    let parent = fx.level("p", Dimension::Tokens, 70);
    let level = fx.level("p/m", Dimension::Tokens, 70);
    assert!(
        parent > 30_000.0 && (level - parent).abs() < 1.0,
        "{level} vs {parent}"
    );
    // Only once: a part given back and taken again brings no more.
    assert!(fx
        .e
        .set_fleet_part("p/m", part(0.0, 1.0 / 3.0, None), fx.now(80)));
    assert!(fx
        .e
        .set_fleet_part("p/m", part(1.0, 1.0 / 3.0, None), fx.now(80)));
    assert_eq!(fx.level("p/m", Dimension::Tokens, 80), 0.0);
    // A quota of its own (another limit) is not filled from the parent's.
    let g = lease(&fx.acquire("p/n", 1000, 0, 0, 90));
    let own = [
        ("x-ratelimit-limit-tokens", "600000"),
        ("x-ratelimit-remaining-tokens", "600"),
        ("x-ratelimit-reset-tokens", "5s"),
    ];
    fx.e.report(&g, &with_headers(200, &own, T0_UNIX + 95), fx.now(95))
        .expect("report");
    assert!(fx
        .e
        .set_fleet_part("p/n", part(1.0, 1.0 / 3.0, None), fx.now(95)));
    assert!(fx.level("p/n", Dimension::Tokens, 95) < 700.0);
}

#[test]
fn a_key_that_only_mirrors_its_parents_quota_needs_no_part_of_its_own() {
    let mut fx = Fx::new(vec![(
        "p",
        limits(vec![rate(Dimension::Tokens, 1_200_000.0, 100_000.0)]),
    )])
    .filled();
    assert!(fx.e.set_fleet_part("p", part(0.5, 0.5, None), fx.now(0)));
    fx.e.set_fleet_default(Some(part(0.0, 0.5, None)), fx.now(0));
    let g = lease(&fx.acquire("p/m", 1000, 0, 0, 10));
    let headers = [
        ("x-ratelimit-limit-tokens", "1200000"),
        ("x-ratelimit-remaining-tokens", "600"),
        ("x-ratelimit-reset-tokens", "5s"),
    ];
    fx.e.report(&g, &with_headers(200, &headers, T0_UNIX + 20), fx.now(20))
        .expect("report");
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(30));
    assert_eq!(
        wants.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(),
        vec!["p"],
        "the model's quota is the parent's"
    );
    assert_eq!(fx.key_status("p/m", 30).fleet.map(|p| p.share), Some(0.5));
    let parent = fx.level("p", Dimension::Tokens, 30);
    assert!((fx.level("p/m", Dimension::Tokens, 30) - parent).abs() < parent * 0.02);
    // The parent's part grows with burst from the bank: the model's moves with it.
    let x = BurstExchange {
        before: 0.5,
        fill: [0.0; 4],
        taken: [0.0, 0.2, 0.0, 0.0],
    };
    assert!(fx
        .e
        .exchange_fleet_part("p", part(0.8, 0.5, None), Some(x), fx.now(30)));
    assert_eq!(fx.key_status("p/m", 30).fleet.map(|p| p.share), Some(0.8));
    let parent = fx.level("p", Dimension::Tokens, 30);
    let model = fx.level("p/m", Dimension::Tokens, 30);
    assert!(
        parent > 60_000.0 && (model - parent).abs() < parent * 0.02,
        "{model} vs {parent}"
    );
}

#[test]
fn the_providers_room_is_what_its_last_remaining_left_of_the_whole_burst() {
    use super::calibrate_tests::{report, requests_headers};
    let mut fx = Fx::new(vec![(
        "k",
        limits(vec![rate(Dimension::Requests, 1200.0, 20.0)]),
    )])
    .filled();
    fx.e.set_fleet_part("k", part(1.0 / 3.0, 1.0 / 3.0, None), fx.now(0));
    let since = fx.now(0).mono;
    let room_of = |fx: &Fx, since| fx.e.provider_rooms(since).get("k").copied();
    assert_eq!(room_of(&fx, since), None, "nothing read yet");
    // Read on a key the configured one limits: its room is the configured key's.
    report(
        &mut fx,
        "k/model",
        200,
        &requests_headers("1200", "15", "250ms"),
        100,
    );
    let room = room_of(&fx, since).expect("a reading");
    assert!((room - 0.75).abs() < 0.01, "{room}");
    // Old readings say nothing.
    assert_eq!(room_of(&fx, fx.now(200).mono), None);
    // A refusal: no room while it cools down.
    report(
        &mut fx,
        "k/model",
        200,
        &requests_headers("1200", "19", "50ms"),
        300,
    );
    let mut o = with_headers(429, &[("retry-after-ms", "500")], T0_UNIX + 300);
    o.error_type = "rate_limit_exceeded".into();
    let l = lease(&fx.acquire("k/model", 0, 0, 0, 300));
    fx.e.report(&l, &o, fx.now(300)).expect("report");
    assert_eq!(room_of(&fx, fx.now(250).mono), Some(0.0));
}

fn on_line(floor: f64) -> FleetPart {
    FleetPart {
        line: true,
        ..part(0.0, floor, None)
    }
}

#[test]
fn on_a_line_only_the_units_given_go_each_from_its_moment() {
    // 600 a minute (10/s), burst 10, full: on a line, what it held is the fleet's again.
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", on_line(0.01), fx.now(0)));
    assert_eq!(grants_now(&mut fx, "k", 0), 0, "nothing held on a line");
    assert_eq!(grants_now(&mut fx, "k", 5_000), 0, "and nothing refills it");
    // Two units, valid at 5.1 s and 5.3 s: a waiter goes at each, not before.
    let a = waiter(&fx.acquire("k", 0, 0, 60_000, 5_000));
    let b = waiter(&fx.acquire("k", 0, 0, 60_000, 5_000));
    let units = [
        (fx.now(5_100).mono, [1.0, 0.0, 0.0, 0.0]),
        (fx.now(5_300).mono, [1.0, 0.0, 0.0, 0.0]),
    ];
    assert!(fx.e.add_fleet_units("k", &units, fx.now(5_000)));
    fx.e.pump(fx.now(5_099));
    assert!(
        fx.e.drain_answers().is_empty(),
        "not before its unit is valid"
    );
    fx.e.pump(fx.now(5_100));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![a]);
    fx.e.pump(fx.now(5_299));
    assert!(fx.e.drain_answers().is_empty());
    fx.e.pump(fx.now(5_300));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![b]);
    // What the fleet wants says what it holds and waits for.
    let _ = fx.acquire("k", 0, 0, 60_000, 5_300);
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(5_300));
    let w = wants.iter().find(|w| w.key == "k").expect("wanted");
    assert_eq!(w.line_units, Some([0.0; 4]));
    assert_eq!(w.queued[0], 1.0);
    // A part again (Redis lost the line): off the line, refilled by its share.
    assert!(fx
        .e
        .set_fleet_part("k", part(1.0, 1.0, None), fx.now(5_300)));
    fx.e.pump(fx.now(5_400));
    assert_eq!(fx.e.drain_answers().len(), 1);
}

#[test]
fn units_given_and_not_valid_yet_are_taken_back_when_the_limiter_stops() {
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", on_line(0.01), fx.now(0)));
    let units = [
        (fx.now(100).mono, [1.0, 0.0, 0.0, 0.0]),
        (fx.now(900).mono, [1.0, 0.0, 0.0, 0.0]),
    ];
    assert!(fx.e.add_fleet_units("k", &units, fx.now(0)));
    let back = fx.e.take_back_fleet_units(fx.now(200));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].0, "k");
    assert_eq!(
        back[0].1,
        vec![fx.now(900).mono],
        "the one already valid is kept"
    );
    assert_eq!(back[0].2[0], 1.0);
    assert_eq!(grants_now(&mut fx, "k", 1_000), 1);
}

#[test]
fn a_line_refilled_by_its_own_share_sends_whole_units_only() {
    // Redis does not answer a fleet of 1,000 hosts: each its thousandth of 10/s, a unit every
    // 100 s. As a part it would send once its thousandth of the burst (0.01) refilled, a
    // second in, as would every host; on its line it waits for a whole unit.
    let mut fx = rpm600_burst10().filled();
    assert!(fx.e.set_fleet_part("k", on_line(0.001), fx.now(0)));
    let own = FleetPart {
        share: 0.001,
        ..on_line(0.001)
    };
    assert!(fx.e.set_fleet_part("k", own, fx.now(0)));
    assert_eq!(grants_now(&mut fx, "k", 0), 0);
    assert_eq!(
        grants_now(&mut fx, "k", 5_000),
        0,
        "not on a part of a unit"
    );
    // Somewhere in 100 to 200 s (its phase), one unit, and never more than one at once.
    assert_eq!(grants_now(&mut fx, "k", 99_000), 0);
    assert_eq!(grants_now(&mut fx, "k", 200_001), 1);
    assert_eq!(grants_now(&mut fx, "k", 200_002), 0);
}

#[test]
fn a_model_whose_rate_a_refusal_cut_still_mirrors_its_parents_quota() {
    // The crowd's key: requests and tokens configured on the parent; the model's headers
    // name the same limits.
    let mut fx = Fx::new(vec![(
        "sim",
        limits(vec![
            rate(Dimension::Requests, 1200.0, 5.0),
            rate(Dimension::Tokens, 1_200_000.0, 100_000.0),
        ]),
    )])
    .filled();
    assert!(fx.e.set_fleet_part("sim", part(0.5, 0.5, None), fx.now(0)));
    fx.e.set_fleet_default(Some(part(0.0, 0.5, None)), fx.now(0));
    let headers = |remaining: &'static str| {
        [
            ("x-ratelimit-limit-requests", "1200"),
            ("x-ratelimit-remaining-requests", remaining),
            ("x-ratelimit-reset-requests", "150ms"),
            ("x-ratelimit-limit-tokens", "1200000"),
            ("x-ratelimit-remaining-tokens", "60000"),
            ("x-ratelimit-reset-tokens", "2s"),
        ]
    };
    let g = lease(&fx.acquire("sim/model", 1000, 0, 0, 10));
    fx.e.report(
        &g,
        &with_headers(200, &headers("3"), T0_UNIX + 20),
        fx.now(20),
    )
    .expect("report");
    let keys = |fx: &mut Fx, at| {
        fx.e.fleet_wants(Duration::from_secs(1), fx.now(at))
            .into_iter()
            .map(|w| w.key)
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&mut fx, 30), vec!["sim"]);
    // A refusal cuts the model's learned rate below what its headers say...
    let g = lease(&fx.acquire("sim/model", 1000, 0, 0, 40));
    fx.e.report(
        &g,
        &with_headers(429, &headers("0"), T0_UNIX + 50),
        fx.now(50),
    )
    .expect("report");
    let model = fx.key_status("sim/model", 60);
    let requests = &model.buckets[0].bucket;
    assert!(requests.limit < 1200.0, "{requests:?}");
    // ... and it is still the parent's quota: no part, and no line, of its own.
    assert_eq!(
        keys(&mut fx, 60),
        vec!["sim"],
        "the model's quota is the parent's"
    );
}

#[test]
fn a_model_that_joins_its_parents_line_holds_the_units_the_parent_waits_for() {
    let mut fx = Fx::new(vec![(
        "sim",
        limits(vec![rate(Dimension::Requests, 1200.0, 5.0)]),
    )])
    .filled();
    fx.e.set_fleet_default(Some(part(0.0, 0.5, None)), fx.now(0));
    assert!(fx.e.set_fleet_part("sim", on_line(0.04), fx.now(0)));
    // One unit now: a first request on the model goes (the model has no limits of its own
    // yet) and its answer names the parent's limit.
    let one = [(fx.now(0).mono, [1.0, 0.0, 0.0, 0.0])];
    assert!(fx.e.add_fleet_units("sim", &one, fx.now(0)));
    let g = lease(&fx.acquire("sim/model", 0, 0, 0, 0));
    let headers = [
        ("x-ratelimit-limit-requests", "1200"),
        ("x-ratelimit-remaining-requests", "2"),
        ("x-ratelimit-reset-requests", "150ms"),
    ];
    fx.e.report(&g, &with_headers(200, &headers, T0_UNIX + 20), fx.now(20))
        .expect("report");
    // The parent waits for two units; then the model joins the line as its mirror.
    let later = [
        (fx.now(300).mono, [1.0, 0.0, 0.0, 0.0]),
        (fx.now(350).mono, [1.0, 0.0, 0.0, 0.0]),
    ];
    assert!(fx.e.add_fleet_units("sim", &later, fx.now(30)));
    let wants = fx.e.fleet_wants(Duration::from_secs(1), fx.now(40));
    assert_eq!(
        wants.iter().map(|w| w.key.as_str()).collect::<Vec<_>>(),
        vec!["sim"]
    );
    assert!(fx.key_status("sim/model", 40).fleet.is_some_and(|p| p.line));
    // Requests on the model go as the parent's units come: the model holds them too.
    let a = waiter(&fx.acquire("sim/model", 0, 0, 60_000, 40));
    let b = waiter(&fx.acquire("sim/model", 0, 0, 60_000, 40));
    fx.e.pump(fx.now(300));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![a]);
    fx.e.pump(fx.now(350));
    assert_eq!(granted_ids(&fx.e.drain_answers()), vec![b]);
}
