//! Signing a delivery: `Onceq-Signature: v1=<hex>`, HMAC-SHA256 keyed with
//! the subscription's secret over `<Onceq-Timestamp>.<body>`. The timestamp
//! is signed too, so a receiver that checks its age refuses a captured
//! delivery replayed later. The toolkit's `onceq::push::verify_signature`
//! is the other half.

use hmac::{Hmac, Mac};
use onceq_types::push::SIGNATURE_SCHEME;
use sha2::Sha256;

/// The `Onceq-Signature` header value of `body` sent at `timestamp` (whole
/// seconds since the Unix epoch, as in `Onceq-Timestamp`).
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "{SIGNATURE_SCHEME}={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_answer() {
        // printf '%s' '1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'whsec_test_secret_0123'
        assert_eq!(
            super::sign("whsec_test_secret_0123", 1_700_000_000, br#"{"a":1}"#),
            "v1=b1e06771f9a20c020fc4b9be257996790d615bbe4d030159b6a5669fdada024c"
        );
    }
}
