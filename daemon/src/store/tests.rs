//! The store against real sled files in temporary folders: round trips, old layouts, damage.

use super::*;
use crate::engine::{Dimension, LimitSource, Period};

fn snap(key: &str, level: f64) -> KeySnapshot {
    KeySnapshot {
        key: key.into(),
        saved_unix_ms: 5,
        buckets: vec![BucketSnapshot {
            bucket: BucketLevel {
                dimension: Dimension::Tokens,
                period: Period::Minute,
                limit: 100.0,
                capacity: 100.0,
                level,
                source: LimitSource::Config,
            },
            headers_limit: Some(80.0),
            headers_capacity: Some(20.0),
            aimd_rate: Some(60.0),
            aimd_refused_rate: 70.0,
        }],
        last_headers: BTreeMap::new(),
        family: Some(crate::engine::Provider::Anthropic),
        contacted: true,
        usage_counting: Some(crate::engine::OutputCounting::Reserved),
    }
}

/// Opens the store again in this process: sled's flusher thread may hold the lock of the
/// handle just dropped for a moment after it is gone.
fn reopen(dir: &Path) -> Store {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match Store::open(dir, 1) {
            Ok((s, _)) => return s,
            Err(e) if std::time::Instant::now() < deadline && e.to_string().contains("lock") => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("reopen: {e}"),
        }
    }
}

#[test]
fn a_panic_inside_sled_is_a_damaged_store_not_a_crash() {
    let err = guarded(Path::new("/d"), || -> () {
        panic!("corrupt page at lsn 7")
    })
    .expect_err("a panic");
    assert!(
        matches!(&err, StoreError::Damaged { what, .. } if what.contains("lsn 7")),
        "{err}"
    );
    assert!(!err.is_locked() && !err.is_environmental());
}

#[test]
fn a_bucket_record_keeps_the_bytes_of_its_flat_layout() {
    // Records written when a bucket's fields were one flat struct must read the same.
    #[derive(serde::Serialize)]
    struct Flat {
        dimension: Dimension,
        period: Period,
        limit: f64,
        capacity: f64,
        level: f64,
        source: LimitSource,
        headers_limit: Option<f64>,
        headers_capacity: Option<f64>,
        aimd_rate: Option<f64>,
        aimd_refused_rate: f64,
    }
    let flat = Flat {
        dimension: Dimension::Tokens,
        period: Period::Minute,
        limit: 100.0,
        capacity: 100.0,
        level: 4.0,
        source: LimitSource::Config,
        headers_limit: Some(80.0),
        headers_capacity: Some(20.0),
        aimd_rate: Some(60.0),
        aimd_refused_rate: 70.0,
    };
    let bytes = postcard::to_stdvec(&flat).expect("encode");
    let read: BucketSnapshot = postcard::from_bytes(&bytes).expect("decode");
    assert_eq!(read, snap("k", 4.0).buckets[0]);
    assert_eq!(postcard::to_stdvec(&read).expect("encode"), bytes);
}

#[test]
fn key_records_carry_their_layout_and_unversioned_ones_still_read() {
    let dir = std::env::temp_dir().join(format!("llmctl-store-v3-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let (s, _) = Store::open(&dir, 1).expect("open");
        s.save_keys(&[snap("new", 4.0)]).expect("save");
        let raw = s.keys.get("new").expect("get").expect("written");
        assert_eq!(raw[..2], [KEY_RECORD_TAG, KEY_RECORD_V3]);
        // A record from before versions: bare postcard, read as it was.
        let unversioned = postcard::to_stdvec(&snap("abc", 2.0)).expect("encode");
        s.keys.insert("abc", unversioned).expect("insert");
        // A layout from a later llmctl: named, not misread.
        s.keys
            .insert("later", vec![KEY_RECORD_TAG, 9, 1, 2, 3])
            .expect("insert");
        let loaded = s.load().expect("load");
        let mut levels: Vec<_> = loaded
            .keys
            .iter()
            .map(|k| (k.key.as_str(), k.buckets[0].bucket.level))
            .collect();
        levels.sort_by(|a, b| a.0.cmp(b.0));
        assert_eq!(levels, [("abc", 2.0), ("new", 4.0)]);
        assert_eq!(loaded.unreadable.len(), 1, "{:?}", loaded.unreadable);
        assert!(
            loaded.unreadable[0].contains("\"later\"") && loaded.unreadable[0].contains("layout 9"),
            "{:?}",
            loaded.unreadable
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn records_of_the_first_layout_are_read_and_replaced() {
    let dir = std::env::temp_dir().join(format!("llmctl-store-v1-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bucket = |dimension, level| BucketLevel {
        dimension,
        period: Period::Minute,
        limit: 600.0,
        capacity: 10.0,
        level,
        source: LimitSource::Headers,
    };
    let old = KeySnapshotV1 {
        key: "old".into(),
        saved_unix_ms: 5,
        buckets: vec![
            bucket(Dimension::Requests, 3.0),
            bucket(Dimension::Tokens, 7.0),
        ],
        last_headers: BTreeMap::from([("x".to_string(), "y".to_string())]),
    };
    {
        let (s, _) = Store::open(&dir, 1).expect("open");
        s.keys_v1
            .insert("old", postcard::to_stdvec(&old).expect("encode"))
            .expect("insert");
        assert!(!s.was_empty());
        let loaded = s.load().expect("load");
        assert!(loaded.unreadable.is_empty(), "{:?}", loaded.unreadable);
        let k = &loaded.keys[0];
        assert_eq!(
            (k.key.as_str(), k.buckets.len(), k.buckets[1].bucket.level),
            ("old", 2, 7.0)
        );
        assert_eq!(k.buckets[0].bucket.source, LimitSource::Headers);
        // Written anew: the new layout replaces it.
        s.save_keys(&[snap("old", 4.0)]).expect("save");
        let loaded = s.load().expect("load");
        assert_eq!(loaded.keys.len(), 1);
        assert_eq!(loaded.keys[0].buckets[0].bucket.level, 4.0);
        assert_eq!(loaded.keys[0].buckets[0].aimd_rate, Some(60.0));
        assert!(s.keys_v1.is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn saves_and_loads_across_reopen() {
    let dir = std::env::temp_dir().join(format!("llmctl-store-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let (s, _) = Store::open(&dir, 1).expect("open");
        assert!(s.was_empty());
        s.save_keys(&[snap("a", 10.0), snap("b", -3.0)])
            .expect("save");
        s.save_keys(&[snap("a", 20.0)]).expect("save");
        let c = |k: &str| CooldownSnapshot {
            daily: None,
            key: k.into(),
            until_unix_ms: 9,
            reason: "r".into(),
            strikes: 1,
        };
        s.save_cooldowns(&[c("x"), c("y")]).expect("save");
        s.save_cooldowns(&[c("y")]).expect("save");
        s.keys.insert("broken", &b"{not json"[..]).expect("insert");
        s.flush().expect("flush");
    }
    let s = reopen(&dir);
    let loaded = s.load().expect("load");
    let mut levels: Vec<(String, f64)> = loaded
        .keys
        .iter()
        .map(|k| (k.key.clone(), k.buckets[0].bucket.level))
        .collect();
    levels.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(levels, vec![("a".into(), 20.0), ("b".into(), -3.0)]);
    assert_eq!(
        loaded
            .cooldowns
            .iter()
            .map(|c| c.key.as_str())
            .collect::<Vec<_>>(),
        vec!["y"]
    );
    assert_eq!(loaded.unreadable.len(), 1);
    assert!(loaded.unreadable[0].contains("broken"));
    let rec = ClaimRecord::Done {
        result: vec![1, 2],
        done_unix_ms: 3,
    };
    s.put_claim("job", &rec).expect("put");
    // A record of the first layout (JSON) still reads.
    s.claims
        .insert(
            "old",
            &br#"{"state":"pending","since_unix_ms":4,"ttl_ms":5}"#[..],
        )
        .expect("insert");
    drop(s);
    let s = reopen(&dir);
    assert_eq!(s.claim("job").expect("get"), Some(rec));
    assert_eq!(s.claim("other").expect("get"), None);
    assert_eq!(
        s.claim("old").expect("get"),
        Some(ClaimRecord::Pending {
            since_unix_ms: 4,
            ttl_ms: 5,
            holder_uid: None
        })
    );
    // Stored as bytes: a 100 KB result costs about 100 KB.
    let big = ClaimRecord::Done {
        result: vec![7; 100_000],
        done_unix_ms: 3,
    };
    assert!(encode_claim(&big).expect("encode").len() < 100_010);
    assert_eq!(
        s.expire_claims(|r| matches!(r, ClaimRecord::Pending { .. }))
            .expect("expire"),
        1
    );
    assert_eq!(s.claim("old").expect("get"), None);
    assert!(s.claim("job").expect("get").is_some());
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
