//! Gauge families in the Prometheus text exposition format (0.0.4).

use std::fmt::Write;

/// Writes families into a buffer.
pub struct Families<'a> {
    out: &'a mut String,
}

impl<'a> Families<'a> {
    /// Appends to `out`.
    pub fn new(out: &'a mut String) -> Self {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        Self { out }
    }

    /// Starts a gauge family: its HELP and TYPE lines.
    pub fn gauge(&mut self, name: &str, help: &str) -> &mut Self {
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} gauge");
        self
    }

    /// Starts a counter family (a total read at scrape time, such as the
    /// process's CPU seconds): its HELP and TYPE lines.
    pub fn counter(&mut self, name: &str, help: &str) -> &mut Self {
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} counter");
        self
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape_label(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {value}");
        self
    }
}

fn escape_help(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Label values escape backslash, double quote and newline.
fn escape_label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_help_type_and_escaped_samples() {
        let mut out = String::from("x_total 1");
        Families::new(&mut out)
            .gauge("g", "A gauge.\nTwo lines.")
            .sample("g", &[("project", "a\"b\\c\nd"), ("state", "x")], 2.5)
            .sample("g", &[], 0.0);
        assert_eq!(
            out,
            "x_total 1\n# HELP g A gauge.\\nTwo lines.\n# TYPE g gauge\n\
             g{project=\"a\\\"b\\\\c\\nd\",state=\"x\"} 2.5\ng 0\n"
        );
    }
}
