//! `webhooks/register`: arbitrary bytes through the body decoding and
//! validation the handler runs before it touches the store, under the
//! default SSRF guard.
#![no_main]

use libfuzzer_sys::fuzz_target;
use onceq_server::{input, outbound::{PushConfig, guard::Guard}};
use onceq_types::webhook::{ALL_EVENTS, EVENT_TYPES, RegisterWebhook};

mod common;

fuzz_target!(|data: &[u8]| {
    let guard = Guard::new(&PushConfig::default());
    common::check::<RegisterWebhook, _>(
        data,
        |r| input::webhook_register(r, &guard),
        |w| {
            assert!(w.url.starts_with("https://"), "accepted url {:?}", w.url);
            assert!(!w.events.is_empty());
            for e in &w.events {
                assert!(e == ALL_EVENTS || EVENT_TYPES.contains(&e.as_str()), "accepted event {e:?}");
            }
            if let Some(s) = &w.secret {
                assert!((16..=255).contains(&s.len()));
            }
        },
    );
});
