//! The rule tests of `shared/rules.rs` over the in-memory `Store`, and what only the
//! in-memory store has (the one-step commit's closure, `begin_with_fingerprint`, notes, the
//! log's bounds, `set_config`, tables without shared ids). Runs natively and in Chromium.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use idem_store::{
    Begin, EventKind, Fenced, IdRef, Lease, RecordId, RequestError, Status, Store, StoreConfig,
    Table,
};

mod shared;

use shared::rules::{
    claim, config, created, status_of, take_over, BODY, LOCK_MS, OPERATION, OPTIONAL, OTHER_BODY,
    REQUIRED, RETENTION_MS,
};
use shared::Held;

rule_tests!(Store::new);

fn store() -> Store {
    Store::new(config())
}

fn kinds(store: &Store) -> Vec<EventKind> {
    store.events().map(|e| e.kind().clone()).collect()
}

// ---- rows of the decision table ----

#[test]
fn no_record_claims_atomically_and_runs_the_work() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 7, "t", "k");
    assert_eq!(id.scope(), "t");
    assert_eq!(id.key().as_str(), "k");
    assert_eq!(lease.locked_at, 7);
    let record = s.table().get(id.as_ref()).expect("claimed").into_owned();
    assert_eq!(record.status, Status::InFlight { lease });
    assert_eq!(record.created_at, 7);
    assert_eq!(record.expires_at, 7 + RETENTION_MS);
    assert_eq!(
        record.fingerprint,
        idem_store::fingerprint(OPERATION, BODY).unwrap()
    );

    let mut runs = 0;
    let order = s.commit(9, &id, &lease, || {
        runs += 1;
        (17, created(17))
    });
    assert_eq!(order, Ok(17));
    assert_eq!(runs, 1);
}

#[test]
fn zombie_commit_after_takeover_does_not_run_the_work() {
    let mut s = store();
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS, "k");
    let mut charges = 0;
    let out = s.commit(LOCK_MS + 1, &id, &zombie, || {
        charges += 1;
        ((), created(1))
    });
    assert_eq!(out, Err(Fenced));
    assert_eq!(
        charges, 0,
        "the business change must not run without the lease"
    );
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
}

#[test]
fn begin_with_fingerprint_follows_the_same_table() {
    let mut s = store();
    let fp = idem_store::fingerprint(OPERATION, BODY).unwrap();
    let other = idem_store::fingerprint(OPERATION, OTHER_BODY).unwrap();
    let Begin::Execute { id, lease, .. } =
        s.begin_with_fingerprint(0, "t", Some("k"), fp, &REQUIRED)
    else {
        panic!("expected a claim")
    };
    assert_eq!(
        s.begin_with_fingerprint(1, "t", Some("k"), fp, &REQUIRED),
        Begin::InFlight {
            retry_after_ms: LOCK_MS - 1
        }
    );
    assert_eq!(
        s.begin_with_fingerprint(1, "t", Some("k"), other, &REQUIRED),
        Begin::Mismatch
    );
    s.save(2, &id, &lease, created(1)).unwrap();
    // The body path and the fingerprint path agree.
    assert_eq!(
        s.begin(3, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
    assert_eq!(
        s.begin_with_fingerprint(3, "t", None, fp, &REQUIRED),
        Begin::Invalid(RequestError::MissingKey)
    );
    assert_eq!(
        s.begin_with_fingerprint(3, "t", None, fp, &OPTIONAL),
        Begin::Unkeyed
    );
}

// ---- event log and snapshot ----

#[test]
fn the_event_log_reads_incrementally_and_stays_bounded() {
    let mut s = Store::new(StoreConfig {
        event_capacity: 3,
        ..config()
    });
    let cursor = s.next_event_seq();
    for i in 0..5 {
        claim(&mut s, i, "t", &format!("k{i}"));
    }
    // Only the last three are held; the cursor sees the gap through seq.
    let seen: Vec<u64> = s.events_since(cursor).map(|e| e.seq()).collect();
    assert_eq!(seen, vec![2, 3, 4]);
    assert_eq!(s.events_since(4).count(), 1);
    assert_eq!(s.events_since(5).count(), 0);
    assert_eq!(s.next_event_seq(), 5);
    assert_eq!(s.drain_events().count(), 3);
    assert_eq!(s.events().count(), 0);
    assert_eq!(s.next_event_seq(), 5);
}

#[test]
fn the_event_log_can_be_turned_off() {
    let mut s = Store::new(StoreConfig {
        event_capacity: 0,
        ..config()
    });
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.save(1, &id, &lease, created(1)).unwrap();
    let _ = s.begin(2, "t", None, BODY, &REQUIRED);
    assert_eq!(s.events().count(), 0);
    assert_eq!(s.next_event_seq(), 0);
}

#[test]
fn notes_from_outside_the_rules_join_the_log() {
    let mut s = store();
    s.push_event(3, "t", Some("k"), "unfenced save (simulated bug)".into());
    let e = s.events().next().unwrap();
    assert_eq!(
        (e.seq(), e.at(), e.scope(), e.key()),
        (0, 3, "t", Some("k"))
    );
    assert_eq!(
        e.kind(),
        &EventKind::Note {
            text: "unfenced save (simulated bug)".into()
        }
    );
    s.push_event(4, "t", Some("bad\nkey"), "x".into());
    assert_eq!(s.events().nth(1).unwrap().key(), None);
}

/// A table that keeps no shared ids: it forwards the primitives and leaves
/// [`Table::get_with_id`] to its default, so the store must make its own ids.
#[derive(Default)]
struct NoSharedIds(idem_store::MemoryTable);

impl Table for NoSharedIds {
    fn get(&self, id: IdRef<'_>) -> Option<std::borrow::Cow<'_, idem_store::Record>> {
        self.0.get(id)
    }
    fn insert_if_absent(&mut self, id: &RecordId, record: idem_store::Record) -> bool {
        self.0.insert_if_absent(id, record)
    }
    fn compare_and_set(&mut self, id: IdRef<'_>, e: &Lease, s: Status, x: u64) -> bool {
        self.0.compare_and_set(id, e, s, x)
    }
    fn release_if_held(&mut self, id: IdRef<'_>, e: &Lease) -> bool {
        self.0.release_if_held(id, e)
    }
    fn reclaim_if_released(&mut self, id: IdRef<'_>, r: &Lease, l: Lease, now: u64) -> bool {
        self.0.reclaim_if_released(id, r, l, now)
    }
    fn delete_if_expired(&mut self, id: IdRef<'_>, now: u64, lock_ms: u64) -> bool {
        self.0.delete_if_expired(id, now, lock_ms)
    }
    fn delete_expired(&mut self, now: u64, lock_ms: u64) -> Vec<RecordId> {
        self.0.delete_expired(now, lock_ms)
    }
    fn next_token(&mut self) -> u64 {
        self.0.next_token()
    }
    fn put(&mut self, id: IdRef<'_>, record: idem_store::Record) -> Option<idem_store::Record> {
        self.0.put(id, record)
    }
    fn remove(&mut self, id: IdRef<'_>) -> Option<idem_store::Record> {
        self.0.remove(id)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn for_each(&self, visit: &mut dyn FnMut(IdRef<'_>, &idem_store::Record)) {
        self.0.for_each(visit)
    }
}

/// Every decision about an existing row, through a table that shares its ids and one
/// that does not: the same answers and the same events.
#[test]
fn decisions_and_events_do_not_depend_on_shared_ids() {
    type Seen = (Vec<Begin>, Vec<(u64, String, Option<String>)>);
    fn run<T: Table>(s: &mut Store<T>) -> Seen {
        let mut out = Vec::new();
        let mut begin = |s: &mut Store<T>, now, key: &str, body| {
            let b = s.begin(now, "t", Some(key), body, &REQUIRED);
            out.push(b.clone());
            b
        };
        let Begin::Execute { id, lease, .. } = begin(s, 0, "k", BODY) else {
            panic!("claim")
        };
        let _ = begin(s, 1, "k", BODY); // 409
        let _ = begin(s, 2, "k", OTHER_BODY); // 422
        let Begin::Execute {
            id: id2,
            lease: lease2,
            taken_over: true,
        } = begin(s, LOCK_MS, "k", BODY)
        else {
            panic!("takeover")
        };
        assert_eq!(id2, id);
        assert_eq!(s.save(LOCK_MS + 1, &id, &lease, created(1)), Err(Fenced));
        s.save(LOCK_MS + 2, &id2, &lease2, created(2)).unwrap();
        let _ = begin(s, LOCK_MS + 3, "k", BODY); // replay
        let Begin::Execute {
            id: id3,
            lease: lease3,
            ..
        } = begin(s, LOCK_MS + 4, "k2", BODY)
        else {
            panic!("claim")
        };
        s.release(LOCK_MS + 5, &id3, &lease3).unwrap();
        let _ = begin(s, LOCK_MS + 6, "k2", OTHER_BODY); // 422: bound to the first body
        let _ = begin(s, LOCK_MS + 7, "k2", BODY); // the same body claims again
        let _ = begin(s, LOCK_MS + 2 + RETENTION_MS, "k", BODY); // expired: pruned, claimed again
        let events = s
            .events()
            .map(|e| (e.at(), e.scope().to_owned(), e.key().map(str::to_owned)))
            .collect();
        (out, events)
    }
    let mut shared = store();
    let mut unshared = Store::with_table(config(), NoSharedIds::default());
    let a = run(&mut shared);
    assert_eq!(a, run(&mut unshared));
    assert_eq!(kinds(&shared), {
        let mut k = Vec::new();
        unshared.events().for_each(|e| k.push(e.kind().clone()));
        k
    });
    assert!(matches!(a.0[4], Begin::Replay(_)));
    assert_eq!(a.0[6], Begin::Mismatch);
    assert!(matches!(&a.0[7], Begin::Execute { id, .. } if id.key().as_str() == "k2"));
    assert_eq!(shared.events().count(), 13);
}

#[test]
fn set_config_keeps_the_table_the_tokens_and_the_event_log() {
    let mut s = store();
    let (_, first) = claim(&mut s, 0, "t", "k");
    let _ = s.begin(1, "t", Some("k"), BODY, &REQUIRED); // 409 under lock_ms = 1000
    let next_seq = s.next_event_seq();
    assert_eq!(next_seq, 2);

    // A shorter lock: the same claim is stale at 101 and is taken over.
    s.set_config(StoreConfig {
        lock_ms: 100,
        ..config()
    });
    assert_eq!(s.config().lock_ms, 100);
    let (id, lease) = take_over(&mut s, 101, "k");
    assert!(lease.token > first.token, "tokens carry on");
    let seqs: Vec<u64> = s.events().map(|e| e.seq()).collect();
    assert_eq!(seqs, vec![0, 1, 2], "the log and its seqs carry on");

    // A shorter retention applies to rows claimed from now on; a row claimed before keeps
    // the retention it was claimed with, for every later write.
    s.set_config(StoreConfig {
        lock_ms: 100,
        retention_ms: 50,
        ..config()
    });
    s.save(102, &id, &lease, created(1)).unwrap();
    assert_eq!(s.rows(102)[0].expires_at, 102 + RETENTION_MS);
    let (new_id, new_lease) = claim(&mut s, 102, "t", "k2");
    s.save(103, &new_id, &new_lease, created(2)).unwrap();
    assert_eq!(s.rows(103)[1].expires_at, 153);
    assert_eq!(
        s.prune(153),
        1,
        "only the row claimed under the new retention"
    );
    assert_eq!(s.rows(153).len(), 1);

    // A smaller log keeps the newest events; 0 turns it off without resetting seqs.
    s.set_config(StoreConfig {
        event_capacity: 2,
        ..config()
    });
    let seqs: Vec<u64> = s.events().map(|e| e.seq()).collect();
    assert_eq!(seqs, vec![5, 6]);
    s.set_config(StoreConfig {
        event_capacity: 0,
        ..config()
    });
    let _ = s.begin(200, "t", Some("k"), BODY, &REQUIRED);
    assert_eq!(s.events().count(), 0);
    s.set_config(config());
    let _ = s.begin(201, "t", Some("k"), BODY, &REQUIRED);
    assert_eq!(s.events().map(|e| e.seq()).collect::<Vec<_>>(), vec![7]);
}
