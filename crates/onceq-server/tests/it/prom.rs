//! Reads a `/metrics` answer: samples by name and label set.

use std::collections::BTreeMap;

use crate::harness::TestServer;

/// One scrape, parsed.
pub struct Scrape {
    pub text: String,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Scrape {
    /// Parses the text format (the subset the server writes).
    pub fn parse(text: String) -> Self {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("name value");
                let value: f64 = value.parse().unwrap_or_else(|_| panic!("value of {l}"));
                let (name, labels) = match series.split_once('{') {
                    Some((name, rest)) => (name, parse_labels(rest.strip_suffix('}').unwrap())),
                    None => (series, BTreeMap::new()),
                };
                (name.to_owned(), labels, value)
            })
            .collect();
        Self { text, samples }
    }

    /// The sample of `name` whose labels are exactly `labels`.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let want: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.samples
            .iter()
            .find(|(n, l, _)| n == name && *l == want)
            .map(|(_, _, v)| *v)
    }

    /// Like `get`, failing the test (with the whole scrape) when absent.
    #[track_caller]
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.get(name, labels)
            .unwrap_or_else(|| panic!("no {name}{labels:?} in:\n{}", self.text))
    }

    /// Every label set of `name`.
    pub fn series(&self, name: &str) -> Vec<&BTreeMap<String, String>> {
        self.samples
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, l, _)| l)
            .collect()
    }
}

fn parse_labels(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"").expect("label=\"");
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next().expect("closing quote") {
                (i, '"') => break i,
                (_, '\\') => match chars.next().expect("escaped char").1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        out.insert(key.trim_start_matches(',').to_owned(), value);
        rest = &after[end + 1..];
    }
    out
}

impl TestServer {
    /// `GET /metrics` without a key; asserts 200 and the text format.
    pub async fn scrape(&self) -> Scrape {
        let r = self.http.get(self.url("/metrics")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["content-type"],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        Scrape::parse(r.text().await.unwrap())
    }
}
