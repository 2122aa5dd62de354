//! The parameters of a connection string that tokio-postgres does not know,
//! taken out before it parses the rest.
//!
//! Both of libpq's forms are read: a URL (`postgres://h/db?sslmode=verify-full`,
//! values percent-encoded) and key/value words (`host=h sslmode='verify-full'`,
//! values optionally single-quoted with backslash escapes). What is left is
//! handed to tokio-postgres as written.

use crate::PgError;

/// A connection string split into the parameters we handle and the rest.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Split {
    /// The string without the taken parameters.
    pub rest: String,
    /// The taken parameters, in order, values decoded.
    pub taken: Vec<(String, String)>,
}

/// Whether `conn` is libpq's URL form (else key/value words).
pub(crate) fn is_url(conn: &str) -> bool {
    conn.starts_with("postgres://") || conn.starts_with("postgresql://")
}

/// Takes the parameters named in `keys` out of `conn`.
pub(crate) fn take(conn: &str, keys: &[&str]) -> Result<Split, PgError> {
    if is_url(conn) {
        take_from_url(conn, keys)
    } else {
        take_from_words(conn, keys)
    }
}

/// Adds `key=value` to a connection string of either form.
pub(crate) fn append(conn: &str, key: &str, value: &str) -> String {
    if is_url(conn) {
        let sep = if conn.contains('?') { '&' } else { '?' };
        format!("{conn}{sep}{key}={}", percent_encode(value))
    } else {
        let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
        format!("{conn} {key}='{quoted}'")
    }
}

fn take_from_url(url: &str, keys: &[&str]) -> Result<Split, PgError> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok(Split {
            rest: url.to_owned(),
            taken: Vec::new(),
        });
    };
    let mut split = Split::default();
    let mut kept = Vec::new();
    for param in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        if keys.contains(&key) {
            split
                .taken
                .push((key.to_owned(), percent_decode(value, key)?));
        } else {
            kept.push(param);
        }
    }
    split.rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok(split)
}

fn take_from_words(conn: &str, keys: &[&str]) -> Result<Split, PgError> {
    let mut split = Split::default();
    let mut kept = Vec::new();
    let mut chars = conn.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let key: String =
            std::iter::from_fn(|| chars.next_if(|c| *c != '=' && !c.is_whitespace())).collect();
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(PgError::new(format!(
                "connection string: expected `=` after {key:?}"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut raw = String::new();
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => {
                        return Err(PgError::new(format!(
                            "connection string: unterminated quoted value of {key}"
                        )));
                    }
                    Some('\'') => break,
                    Some('\\') => match chars.next() {
                        Some(c) => value.push(c),
                        None => {
                            return Err(PgError::new(format!(
                                "connection string: unterminated quoted value of {key}"
                            )));
                        }
                    },
                    Some(c) => value.push(c),
                }
            }
            raw = format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"));
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                raw.push(c);
                value.push(c);
            }
        }
        if keys.contains(&key.as_str()) {
            split.taken.push((key, value));
        } else {
            kept.push(format!("{key}={raw}"));
        }
    }
    split.rest = kept.join(" ");
    Ok(split)
}

fn percent_decode(value: &str, key: &str) -> Result<String, PgError> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| PgError::new(format!("database URL: bad %-escape in {key}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| PgError::new(format!("database URL: {key} is not UTF-8 once decoded")))
}

fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[&str] = &["sslmode", "sslrootcert"];

    fn taken(conn: &str) -> (String, Vec<(&'static str, String)>) {
        let split = take(conn, KEYS).unwrap();
        let taken = split
            .taken
            .into_iter()
            .map(|(k, v)| (*KEYS.iter().find(|x| **x == k).unwrap(), v))
            .collect();
        (split.rest, taken)
    }

    #[test]
    fn urls_lose_only_the_taken_parameters() {
        assert_eq!(taken("postgres://h/db"), ("postgres://h/db".into(), vec![]));
        assert_eq!(
            taken(
                "postgres://u@h:5/db?sslmode=verify-full&connect_timeout=2&sslrootcert=%2Fca%20x.pem"
            ),
            (
                "postgres://u@h:5/db?connect_timeout=2".into(),
                vec![
                    ("sslmode", "verify-full".into()),
                    ("sslrootcert", "/ca x.pem".into())
                ]
            )
        );
        assert_eq!(
            taken("postgresql://a:1,b:2/db?sslmode=require"),
            (
                "postgresql://a:1,b:2/db".into(),
                vec![("sslmode", "require".into())]
            )
        );
        assert!(take("postgres://h/db?sslrootcert=%zz", KEYS).is_err());
    }

    #[test]
    fn words_lose_only_the_taken_parameters() {
        assert_eq!(
            taken("host=h sslmode = verify-ca  dbname='my db' sslrootcert='/a \\'b\\'.pem'"),
            (
                "host=h dbname='my db'".into(),
                vec![
                    ("sslmode", "verify-ca".into()),
                    ("sslrootcert", "/a 'b'.pem".into())
                ]
            )
        );
        assert!(take("host=h sslmode", KEYS).is_err());
        assert!(take("host='h", KEYS).is_err());
    }

    #[test]
    fn appended_parameters_read_back() {
        for conn in ["postgres://h/db", "postgres://h/db?x=1", "host=h"] {
            let with = append(conn, "sslrootcert", "/a b/it's.pem");
            let split = take(&with, KEYS).unwrap();
            assert_eq!(split.rest, conn);
            assert_eq!(
                split.taken,
                vec![("sslrootcert".to_owned(), "/a b/it's.pem".to_owned())]
            );
        }
    }
}
