//! API keys: stored by hash, looked up, listed, revoked.

use onceq_store::{KeyInsert, KeyRecord};

use crate::Harness;

conformance!(
    key_insert_then_lookup,
    key_revoke_hides_it,
    key_list_oldest_first_with_revoked
);

fn key(h: &Harness, project: &str, id: &str, hash: u8) -> KeyInsert {
    KeyInsert {
        project: project.into(),
        key_id: id.into(),
        key_hash: vec![hash; 32],
        label: Some(format!("label of {id}")),
        scope: Default::default(),
        expires_at: None,
        now: h.now,
    }
}

/// The keys of the listing that are not the harness's own.
async fn listed(h: &Harness) -> Vec<KeyRecord> {
    let all = h.store.key_list().await.unwrap();
    all.into_iter()
        .filter(|k| !k.key_id.starts_with("harness-"))
        .collect()
}

async fn key_insert_then_lookup(h: Harness) {
    let rec = h.store.key_insert(key(&h, "alpha", "k1", 1)).await.unwrap();
    let want = KeyRecord {
        key_id: "k1".into(),
        project: "alpha".into(),
        label: Some("label of k1".into()),
        created_at: h.now,
        revoked_at: None,
        scope: Default::default(),
        expires_at: None,
        rate: None,
    };
    assert_eq!(rec, want);
    assert_eq!(h.store.key_lookup(&[1; 32]).await.unwrap(), Some(want));
    assert_eq!(h.store.key_lookup(&[2; 32]).await.unwrap(), None);

    // A second key of another project looks up to its own project.
    h.store.key_insert(key(&h, "beta", "k2", 2)).await.unwrap();
    let beta = h.store.key_lookup(&[2; 32]).await.unwrap().unwrap();
    assert_eq!(
        (beta.key_id.as_str(), beta.project.as_str()),
        ("k2", "beta")
    );
}

async fn key_revoke_hides_it(mut h: Harness) {
    h.store.key_insert(key(&h, "alpha", "k1", 1)).await.unwrap();
    h.store.key_insert(key(&h, "alpha", "k2", 2)).await.unwrap();
    h.advance(10);
    assert!(h.store.key_revoke("k1", h.now).await.unwrap());
    assert_eq!(h.store.key_lookup(&[1; 32]).await.unwrap(), None);
    assert!(
        h.store.key_lookup(&[2; 32]).await.unwrap().is_some(),
        "other kept"
    );
    assert!(
        !h.store.key_revoke("k1", h.now).await.unwrap(),
        "already revoked"
    );
    assert!(!h.store.key_revoke("nope", h.now).await.unwrap());
}

async fn key_list_oldest_first_with_revoked(mut h: Harness) {
    h.store
        .key_insert(key(&h, "alpha", "zz-old", 1))
        .await
        .unwrap();
    h.advance(1);
    h.store
        .key_insert(key(&h, "beta", "aa-new", 2))
        .await
        .unwrap();
    h.advance(1);
    h.store.key_revoke("zz-old", h.now).await.unwrap();

    let got = listed(&h).await;
    let ids: Vec<&str> = got.iter().map(|k| k.key_id.as_str()).collect();
    assert_eq!(ids, ["zz-old", "aa-new"], "oldest first, revoked included");
    assert_eq!(got[0].revoked_at, Some(h.t(2)));
    assert_eq!(got[0].created_at, h.t(0));
    assert_eq!(got[1].revoked_at, None);
}
