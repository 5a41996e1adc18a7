//! The verdict: each case with its basis and result, as a table for people, JSON for
//! machines and JUnit XML for CI. Required and SDK-needed cases count; advisory ones are
//! reported and never fail the run.

use std::fmt::Write as _;

use serde::Serialize;

/// Why a case is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The IETF draft `Idempotency-Key` header, RFC 9110, RFC 9457.
    Required,
    /// What idem's SDK relies on to retry safely (a replay of the same bytes, 409 with
    /// `Retry-After`, 422 never retried, headers a browser may read).
    NeededBySdk,
    /// idem's own choices (the 255-character key limit, reordered JSON members as one
    /// request): reported, not counted.
    Advisory,
}

impl Basis {
    /// Whether a failure of this basis fails the run.
    pub fn counts(self) -> bool {
        !matches!(self, Basis::Advisory)
    }

    fn label(self) -> &'static str {
        match self {
            Basis::Required => "required",
            Basis::NeededBySdk => "sdk",
            Basis::Advisory => "advisory",
        }
    }
}

/// How a case came out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Verdict {
    /// It holds.
    Pass,
    /// It does not, and why.
    Fail {
        /// What was expected and what came.
        why: String,
    },
    /// It could not be checked, and why (the configuration does not say how).
    NotChecked {
        /// What is missing.
        why: String,
    },
}

/// A case: its stable name, why it is checked, what it checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// A stable name, `repeat-replayed`.
    pub id: &'static str,
    /// Why it is checked.
    pub basis: Basis,
    /// What it checks, in a sentence.
    pub title: &'static str,
}

impl Case {
    /// This case's line, come out as `verdict`.
    pub fn result(&self, verdict: Verdict, exchanges: Vec<String>) -> CaseResult {
        CaseResult {
            id: self.id,
            basis: self.basis,
            title: self.title,
            verdict,
            exchanges,
        }
    }
}

/// One case's line.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// A stable name, `repeat-replayed`.
    pub id: &'static str,
    /// Why it is checked.
    pub basis: Basis,
    /// What it checks, in a sentence.
    pub title: &'static str,
    /// How it came out.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The exact exchanges, on failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exchanges: Vec<String>,
}

impl CaseResult {
    /// Whether this case fails the run.
    pub fn fails_the_run(&self) -> bool {
        self.basis.counts() && matches!(self.verdict, Verdict::Fail { .. })
    }
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The server checked.
    pub target: String,
    /// The seed (fresh values, keys, fault draws).
    pub seed: u64,
    /// Every case, in order.
    pub cases: Vec<CaseResult>,
    /// The command line that reruns this run.
    pub rerun: String,
}

impl Report {
    /// Whether every counted case passed (the exit status is 0 only then).
    pub fn passed(&self) -> bool {
        !self.cases.iter().any(CaseResult::fails_the_run)
    }

    /// The names of the cases that did not pass (failed, counted or not, or not checked).
    pub fn not_passed(&self) -> Vec<&'static str> {
        self.cases
            .iter()
            .filter(|c| c.verdict != Verdict::Pass)
            .map(|c| c.id)
            .collect()
    }

    /// How many cases came out each way: pass, fail (counted), fail (advisory), not checked.
    pub fn tally(&self) -> (usize, usize, usize, usize) {
        let mut tally = (0, 0, 0, 0);
        for case in &self.cases {
            match (&case.verdict, case.basis.counts()) {
                (Verdict::Pass, _) => tally.0 += 1,
                (Verdict::Fail { .. }, true) => tally.1 += 1,
                (Verdict::Fail { .. }, false) => tally.2 += 1,
                (Verdict::NotChecked { .. }, _) => tally.3 += 1,
            }
        }
        tally
    }

    /// The table: one line per case, then each failure's exchanges, then the verdict.
    pub fn table(&self) -> String {
        let mut out = format!("idem-check {} (seed {})\n\n", self.target, self.seed);
        let width = self.cases.iter().map(|c| c.id.len()).max().unwrap_or(0);
        for case in &self.cases {
            let (result, why) = match &case.verdict {
                Verdict::Pass => ("pass", String::new()),
                Verdict::Fail { why } => ("FAIL", format!(": {why}")),
                Verdict::NotChecked { why } => ("not checked", format!(": {why}")),
            };
            let _ = writeln!(
                out,
                "{result:<11}  {:<8}  {:<width$}  {}{why}",
                case.basis.label(),
                case.id,
                case.title,
            );
        }
        for case in self.cases.iter().filter(|c| !c.exchanges.is_empty()) {
            let _ = writeln!(out, "\n--- {} ---", case.id);
            for exchange in &case.exchanges {
                let _ = writeln!(out, "{exchange}");
            }
        }
        let (pass, fail, advisory, unchecked) = self.tally();
        let _ = writeln!(
            out,
            "\n{}: {pass} passed, {fail} failed, {advisory} advisory failed, {unchecked} not checked",
            if self.passed() { "PASS" } else { "FAIL" }
        );
        let _ = writeln!(out, "rerun: {}", self.rerun);
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> String {
        let mut json = serde_json::to_value(self).unwrap_or_default();
        if let Some(object) = json.as_object_mut() {
            object.insert("passed".to_owned(), self.passed().into());
        }
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// The report as JUnit XML: one test case per case; an advisory failure is written as
    /// skipped with its reason, so CI counts only the cases that count.
    pub fn junit(&self) -> String {
        let (_, fail, _, _) = self.tally();
        let skipped = self
            .cases
            .iter()
            .filter(|c| !matches!(c.verdict, Verdict::Pass) && !c.fails_the_run())
            .count();
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuite name=\"idem-check\" tests=\"{}\" failures=\"{fail}\" skipped=\"{skipped}\">",
            self.cases.len()
        );
        let _ = writeln!(
            out,
            "  <properties><property name=\"target\" value=\"{}\"/><property name=\"seed\" value=\"{}\"/></properties>",
            xml(&self.target),
            self.seed
        );
        for case in &self.cases {
            let _ = write!(
                out,
                "  <testcase classname=\"idem-check.{}\" name=\"{}\">",
                case.basis.label(),
                xml(case.id)
            );
            match &case.verdict {
                Verdict::Pass => {}
                Verdict::Fail { why } if case.basis.counts() => {
                    let _ = write!(
                        out,
                        "<failure message=\"{}\">{}</failure>",
                        xml(why),
                        xml(&case.exchanges.join("\n"))
                    );
                }
                Verdict::Fail { why } => {
                    let _ = write!(out, "<skipped message=\"advisory: {}\"/>", xml(why));
                }
                Verdict::NotChecked { why } => {
                    let _ = write!(out, "<skipped message=\"not checked: {}\"/>", xml(why));
                }
            }
            out.push_str("</testcase>\n");
        }
        out.push_str("</testsuite>\n");
        out
    }
}

/// `text` escaped for an XML attribute or element; characters XML 1.0 cannot hold are
/// written as `?`.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &'static str, basis: Basis, verdict: Verdict) -> CaseResult {
        CaseResult {
            id,
            basis,
            title: "t",
            verdict,
            exchanges: vec!["> POST /x\n< 500 <b>\u{1}".to_owned()],
        }
    }

    fn report(cases: Vec<CaseResult>) -> Report {
        Report {
            target: "http://127.0.0.1:1".to_owned(),
            seed: 9,
            cases,
            rerun: "idem-check --seed 9".to_owned(),
        }
    }

    #[test]
    fn only_a_counted_failure_fails_the_run() {
        let fail = |why: &str| Verdict::Fail {
            why: why.to_owned(),
        };
        let advisory = report(vec![
            case("a", Basis::Required, Verdict::Pass),
            case("b", Basis::Advisory, fail("x")),
            case(
                "c",
                Basis::NeededBySdk,
                Verdict::NotChecked { why: "n".into() },
            ),
        ]);
        assert!(advisory.passed());
        assert_eq!(advisory.tally(), (1, 0, 1, 1));
        let counted = report(vec![case("a", Basis::NeededBySdk, fail("x"))]);
        assert!(!counted.passed());
        assert!(counted.table().contains("FAIL"));
        assert!(counted.json().contains("\"passed\": false"));
    }

    #[test]
    fn junit_escapes_what_it_quotes_and_skips_what_does_not_count() {
        let xml = report(vec![
            case(
                "a",
                Basis::Required,
                Verdict::Fail {
                    why: "got \"500\" & <b>".into(),
                },
            ),
            case("b", Basis::Advisory, Verdict::Fail { why: "x".into() }),
        ])
        .junit();
        assert!(xml.contains("failures=\"1\" skipped=\"1\""), "{xml}");
        assert!(xml.contains("got &quot;500&quot; &amp; &lt;b&gt;"), "{xml}");
        assert!(
            xml.contains("&lt;b&gt;?"),
            "a control character is replaced: {xml}"
        );
        assert!(!xml.contains('\u{1}'));
    }
}
