//! The one way the CLI tells a failure: each cause said once, then a hint.
//!
//! An error's chain often repeats itself (reqwest's "error sending
//! request" carries hyper's text, which carries the socket's "Connection
//! refused"; a database error is wrapped by the pool and by the store),
//! so a cause whose text an earlier one already contains is dropped. The
//! common causes map to what to do about them: a server that is not
//! running, a URL without a scheme, a missing or wrong key, an API error
//! (its code, message and the server's own hint).

use std::error::Error as StdError;
use std::io::ErrorKind;

/// A failure the CLI itself diagnosed, with what to do about it.
#[derive(Debug)]
pub struct Hinted {
    message: String,
    hint: String,
}

impl Hinted {
    /// `message` said as the error, `hint` on the line below.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for Hinted {}

/// Refuses a server URL reqwest could not use, saying why in its terms.
pub fn check_url(url: &str) -> Result<(), Hinted> {
    let hint = "use http://host:port, e.g. --url http://127.0.0.1:8787 (or ONCEQ_URL)";
    if !url.contains("://") {
        return Err(Hinted::new(
            format!("--url {url:?} has no scheme (http:// or https://)"),
            hint,
        ));
    }
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.has_host() => Ok(()),
        Ok(u) => Err(Hinted::new(
            format!(
                "--url {url:?} is not an http:// or https:// URL (scheme {:?})",
                u.scheme()
            ),
            hint,
        )),
        Err(e) => Err(Hinted::new(
            format!("--url {url:?} is not a URL: {e}"),
            hint,
        )),
    }
}

/// Decodes JSON the user wrote; a failure names the field (as the server
/// does, without the `?` of a place the decoder cannot name) and where it
/// is: `priority: invalid type: string "x", expected an integer at line 1
/// column 37`.
pub fn decode<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    decode_at(text, Place::LineAndColumn)
}

/// [`decode`] for one line of a file, whose line number the caller says:
/// the place is its column only.
pub fn decode_line<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    decode_at(text, Place::Column)
}

#[derive(Clone, Copy)]
enum Place {
    LineAndColumn,
    Column,
}

fn decode_at<T: serde::de::DeserializeOwned>(text: &str, place: Place) -> anyhow::Result<T> {
    let said = |path: &str, e: &serde_json::Error| {
        // serde_json ends its text with " at line L column C"; say it once,
        // as `place` asks.
        let full = e.to_string();
        let what = match e.line() {
            0 => full.as_str(),
            _ => full
                .rsplit_once(" at line ")
                .map_or(full.as_str(), |(w, _)| w),
        };
        let at = match (e.line(), place) {
            (0, _) => String::new(),
            (l, Place::LineAndColumn) => format!(" at line {l} column {}", e.column()),
            (_, Place::Column) => format!(" at column {}", e.column()),
        };
        match path.is_empty() {
            true => anyhow::anyhow!("{what}{at}"),
            false => anyhow::anyhow!("{path}: {what}{at}"),
        }
    };
    let de = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let mut path = String::new();
        for segment in e.path() {
            match segment {
                serde_path_to_error::Segment::Unknown => break,
                serde_path_to_error::Segment::Seq { index } => path.push_str(&format!("[{index}]")),
                other => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&other.to_string());
                }
            }
        }
        said(&path, e.inner())
    })?;
    de.end().map_err(|e| said("", &e))?;
    Ok(value)
}

/// The lines to print for `err`: `error: ...` and, where one is known,
/// `hint: ...`.
pub fn render(err: &anyhow::Error) -> String {
    let mut said: Vec<String> = Vec::new();
    for cause in err.chain() {
        let text = describe(cause);
        let text = text.trim();
        if text.is_empty() || said.iter().any(|s| s.contains(text)) {
            continue;
        }
        said.push(text.to_owned());
    }
    let mut out = format!("error: {}", said.join(": "));
    if let Some(hint) = hint(err) {
        out.push_str("\nhint: ");
        out.push_str(&hint);
    }
    out
}

/// One cause's text: an API error as `CODE: message` (the client's own
/// wording would name the code a second time), serde_json's errors with
/// where they are, the rest as they say themselves.
fn describe(cause: &(dyn StdError + 'static)) -> String {
    if let Some(e) = cause.downcast_ref::<onceq::Error>()
        && let (Some(code), Some(message)) = (e.code(), server_message(e))
    {
        return format!("{code}: {message}");
    }
    cause.to_string()
}

/// The server's own message of an API error.
fn server_message(e: &onceq::Error) -> Option<String> {
    use onceq::Error::*;
    Some(match e {
        InvalidParams(r)
        | Unauthorized(r)
        | InsufficientCredit(r)
        | QueueNotFound(r)
        | QueueAlreadyExists(r)
        | MessageTooLarge(r)
        | KeyReused(r)
        | MessageNotFound(r) => r.message.clone(),
        Unavailable { message, .. } | Server { message, .. } => message.clone(),
        RateLimited { retry_after } => match retry_after {
            Some(d) => format!("too many calls; retry after {} s", d.as_secs()),
            None => "too many calls".into(),
        },
        _ => return None,
    })
}

/// What to do about `err`, for the causes people meet daily.
fn hint(err: &anyhow::Error) -> Option<String> {
    for cause in err.chain() {
        if let Some(h) = cause.downcast_ref::<Hinted>() {
            return Some(h.hint.clone());
        }
        if let Some(e) = cause.downcast_ref::<onceq::Error>() {
            return client_hint(e);
        }
    }
    // Not the server: the store of `keys`/`projects`/`serve`.
    if refused(err.chain()) {
        return Some(
            "is the database running and reachable at --database-url (or DATABASE_URL)?".into(),
        );
    }
    err.chain()
        .any(|c| {
            c.is::<onceq_store::StoreError>()
                || matches!(
                    c.downcast_ref::<onceq_server::serve::ServeError>(),
                    Some(onceq_server::serve::ServeError::Store(_))
                )
        })
        .then(|| {
            "check --database-url (or DATABASE_URL) and --data-dir: they name the store `onceq serve` uses".into()
        })
}

fn client_hint(e: &onceq::Error) -> Option<String> {
    match e {
        onceq::Error::Transport(t) => {
            let at = t.url().map(origin).unwrap_or_else(|| "that URL".into());
            if t.is_connect()
                && refused(std::iter::successors(
                    Some(t as &(dyn StdError + 'static)),
                    |e| (*e).source(),
                ))
            {
                Some(format!(
                    "is the server running at {at}? start it with `onceq serve`"
                ))
            } else if t.is_connect() {
                Some(format!("could not reach {at}: check --url (or ONCEQ_URL)"))
            } else if t.is_timeout() {
                Some(format!("{at} did not answer in time; is it overloaded?"))
            } else {
                None
            }
        }
        onceq::Error::Unauthorized(_) => Some("pass --api-key or set ONCEQ_API_KEY".into()),
        _ => e.hint().map(str::to_owned),
    }
}

/// Whether a cause of the chain is a refused TCP connection.
fn refused<'a>(mut chain: impl Iterator<Item = &'a (dyn StdError + 'static)>) -> bool {
    chain.any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::ConnectionRefused)
            || c.to_string().contains("Connection refused")
    })
}

/// `scheme://host:port` of a request's URL: where the server was sought.
fn origin(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_said_is_dropped() {
        let io = std::io::Error::new(ErrorKind::ConnectionRefused, "Connection refused");
        let err = anyhow::Error::new(io)
            .context("tcp connect error: Connection refused")
            .context("listing keys");
        assert_eq!(
            render(&err),
            "error: listing keys: tcp connect error: Connection refused\n\
             hint: is the database running and reachable at --database-url (or DATABASE_URL)?"
        );
    }

    #[test]
    fn urls_without_a_scheme_are_refused_with_a_hint() {
        for bad in ["127.0.0.1:8787", "localhost", "ftp://example.com"] {
            let err = anyhow::Error::new(check_url(bad).unwrap_err());
            let text = render(&err);
            assert!(text.contains("hint: use http://host:port"), "{bad}: {text}");
        }
        check_url("http://127.0.0.1:8787").unwrap();
        check_url("https://queue.example.com/").unwrap();
    }
}
