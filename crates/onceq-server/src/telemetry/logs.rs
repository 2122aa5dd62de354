//! Which log lines are written and how: the filter from `ONCEQ_LOG` or
//! `RUST_LOG`, the format `text` or `json`.

use std::{fmt, str::FromStr};

use tracing_subscriber::EnvFilter;

use super::TelemetryError;

/// The filter variables, most specific first: `ONCEQ_LOG` wins over
/// `RUST_LOG`, so onceq can be set apart from other Rust programs sharing
/// an environment.
pub const FILTER_VARS: [&str; 2] = ["ONCEQ_LOG", "RUST_LOG"];

/// The filter when neither variable is set (or both are empty). refinery
/// says at INFO what it checked on every store opening ("no migrations to
/// apply"), which would be noise in every `onceq keys` answer; the store
/// logs each migration it applies itself (INFO under `serve`, DEBUG under
/// the admin commands).
pub const DEFAULT_FILTER: &str = "info,refinery_core=warn";

/// How log lines are written (`--log-format`, `ONCEQ_LOG_FORMAT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// One human-readable line per event (colours on a terminal).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, the
    /// event's fields (`message`, …) and `spans`, the spans it happened in
    /// with their fields (a request's has `request_id`).
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            other => Err(format!(
                "unknown log format {other:?}: use text (the default) or json"
            )),
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Text => "text",
            Self::Json => "json",
        })
    }
}

/// The log filter from the first of [`FILTER_VARS`] that `var` finds
/// non-empty, or [`DEFAULT_FILTER`]. A filter that does not parse is an
/// error naming its variable, not a silent fallback.
pub fn filter(var: impl Fn(&str) -> Option<String>) -> Result<EnvFilter, TelemetryError> {
    for name in FILTER_VARS {
        if let Some(value) = var(name).filter(|v| !v.trim().is_empty()) {
            return EnvFilter::try_new(&value).map_err(|e| TelemetryError::Setting {
                name,
                problem: format!("{value:?} is not a log filter ({e})"),
                hint: "use a level (warn) or target=level pairs (info,onceq_server=debug)",
            });
        }
    }
    Ok(EnvFilter::new(DEFAULT_FILTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<String, TelemetryError> {
        filter(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
        .map(|f| f.to_string())
    }

    #[test]
    fn onceq_log_wins_over_rust_log_and_info_is_the_default() {
        assert_eq!(
            from(&[]).unwrap(),
            EnvFilter::new(DEFAULT_FILTER).to_string()
        );
        assert_eq!(from(&[("RUST_LOG", "warn")]).unwrap(), "warn");
        assert_eq!(
            from(&[("RUST_LOG", "warn"), ("ONCEQ_LOG", "debug")]).unwrap(),
            "debug"
        );
        assert_eq!(
            from(&[("RUST_LOG", "warn"), ("ONCEQ_LOG", " ")]).unwrap(),
            "warn"
        );
    }

    #[test]
    fn a_bad_filter_names_its_variable() {
        let err = from(&[("RUST_LOG", "onceq=loud")]).unwrap_err().to_string();
        assert!(err.contains("RUST_LOG"), "{err}");
    }

    #[test]
    fn formats_parse_in_any_case() {
        assert_eq!("JSON".parse::<LogFormat>().unwrap(), LogFormat::Json);
        assert_eq!("text".parse::<LogFormat>().unwrap(), LogFormat::Text);
        assert!("yaml".parse::<LogFormat>().unwrap_err().contains("json"));
    }
}
