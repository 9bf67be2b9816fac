//! The summary `scan` prints without `-o` (and `scan --json` as one JSON object): per dialect,
//! provider host and model, how many streams, how many not OK, how many showed each finding kind,
//! how many each naive strategy got wrong, and the time to the first call (p50, p95). It is
//! computed from the `streams` rows alone, so the same numbers come out of the written tables
//! with any SQL engine (`examples/spark/queries.sql` asks DuckDB; a test compares them).
//!
//! Memory: a fixed set of counters per group, plus one number per stream with a time to its
//! first call (8 bytes; the percentiles are exact, as SQL's `quantile_disc` computes them).

use std::collections::BTreeMap;

use serde_json::json;

use crate::naive::Strategy;

use super::rows::StreamRow;

/// The group a stream is counted in: dialect, provider host, model (each may be unknown).
pub type GroupKey = (Option<String>, Option<String>, Option<String>);

/// The counters of one group (or of all streams).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Rows of the `streams` table (unreadable files included).
    pub streams: u64,
    /// Streams whose verdict is not `ok` (unreadable files included).
    pub not_ok: u64,
    /// Per finding kind: streams that showed it.
    pub kinds: BTreeMap<String, u64>,
    /// Per strategy (in [`Strategy::ALL`] order): streams it ran on, and those it got wrong.
    pub naive_ran: Vec<u64>,
    pub naive_failed: Vec<u64>,
    /// Times to the first call (µs) of the streams that have one.
    first_call_us: Vec<u64>,
}

impl GroupStats {
    fn add(&mut self, row: &StreamRow) {
        if self.naive_ran.is_empty() {
            self.naive_ran = vec![0; Strategy::ALL.len()];
            self.naive_failed = vec![0; Strategy::ALL.len()];
        }
        self.streams += 1;
        self.not_ok += u64::from(!row.ok());
        for k in row.kinds() {
            match self.kinds.get_mut(k) {
                Some(n) => *n += 1,
                None => {
                    self.kinds.insert(k.to_owned(), 1);
                }
            }
        }
        for (i, agrees) in row.naive.iter().enumerate() {
            if let (Some(agrees), Some(ran), Some(failed)) = (
                agrees,
                self.naive_ran.get_mut(i),
                self.naive_failed.get_mut(i),
            ) {
                *ran += 1;
                *failed += u64::from(!agrees);
            }
        }
        if let Some(t) = row.first_call_us {
            self.first_call_us.push(t);
        }
    }

    /// Streams with a time to their first call.
    pub fn first_call_count(&self) -> usize {
        self.first_call_us.len()
    }

    /// The `q` quantile (0..=1) of the times to the first call, in µs: the smallest time whose
    /// cumulative share is at least `q` (SQL's `quantile_disc` / `percentile_disc`).
    pub fn first_call_quantile(&mut self, q: f64) -> Option<u64> {
        quantile_disc(&mut self.first_call_us, q)
    }
}

/// The smallest value of `values` whose cumulative share is at least `q` (`percentile_disc`):
/// sorts `values` in place.
pub fn quantile_disc(values: &mut [u64], q: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    let n = values.len();
    let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
    values.get(rank.saturating_sub(1).min(n - 1)).copied()
}

/// The summary being built, one stream row at a time.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Files scanned (each counted once, whatever its streams), skipped ones included.
    pub files: u64,
    /// Entries found in folders that are not captures (`skipped` rows: nothing recognised in
    /// them, or not a regular file): counted here, never as streams.
    pub skipped: u64,
    /// Files in folders left unread for their extension (no row).
    pub other_files: u64,
    /// Files that could not be read (`unreadable` rows; also counted as not OK).
    pub unreadable: u64,
    pub groups: BTreeMap<GroupKey, GroupStats>,
    pub total: GroupStats,
}

impl Summary {
    /// Count one row of the `streams` table (a skipped entry apart from the streams).
    pub fn add(&mut self, row: &StreamRow) {
        if !row.is_stream() {
            self.skipped += 1;
            return;
        }
        self.unreadable += u64::from(row.verdict == super::RowVerdict::Unreadable);
        let key = (
            row.dialect.clone(),
            row.provider_host.clone(),
            row.model.clone(),
        );
        self.groups.entry(key).or_default().add(row);
        self.total.add(row);
    }

    /// Count one file left unread in a folder for its extension.
    pub fn add_other_file(&mut self) {
        self.other_files += 1;
    }

    /// Count one file (of any number of streams).
    pub fn add_file(&mut self) {
        self.files += 1;
    }

    /// Streams counted (unreadable files included).
    pub fn streams(&self) -> u64 {
        self.total.streams
    }

    /// The last line of the text summary (and of `scan -o`'s message, with where the rows went
    /// as `into`): streams, files, not OK, and the entries skipped or left unread when there are
    /// some.
    pub fn last_line(&self, into: Option<&str>) -> String {
        let mut line = format!(
            "{} in {}{}; {} not OK",
            crate::text::plural(self.total.streams as usize, "stream"),
            crate::text::plural(self.files as usize, "file"),
            into.map(|i| format!(" into {i}")).unwrap_or_default(),
            self.total.not_ok
        );
        if self.skipped > 0 {
            line.push_str(&format!("; {} skipped (not a capture)", self.skipped));
        }
        if self.other_files > 0 {
            line.push_str(&format!(
                "; {} with other extensions not read",
                crate::text::plural(self.other_files as usize, "file")
            ));
        }
        line
    }

    /// Some stream is not OK, or some file could not be read (`scan` exits 1).
    pub fn any_not_ok(&self) -> bool {
        self.total.not_ok > 0
    }

    /// The summary as one JSON object (`scan --json`): the counts, not only the shares, so other
    /// tools can compare them exactly.
    pub fn to_json(&mut self) -> serde_json::Value {
        let group_json = |key: Option<&GroupKey>, g: &mut GroupStats| {
            let strategies: serde_json::Map<String, serde_json::Value> = Strategy::ALL
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        s.name().to_owned(),
                        json!({
                            "ran": g.naive_ran.get(i).copied().unwrap_or(0),
                            "failed": g.naive_failed.get(i).copied().unwrap_or(0),
                        }),
                    )
                })
                .collect();
            let mut v = json!({
                "streams": g.streams,
                "not_ok": g.not_ok,
                "finding_kinds": g.kinds,
                "naive_failures": strategies,
                "first_call": {
                    "streams": g.first_call_count(),
                    "p50_us": g.first_call_quantile(0.5),
                    "p95_us": g.first_call_quantile(0.95),
                },
            });
            if let (Some((d, h, m)), Some(o)) = (key, v.as_object_mut()) {
                o.insert("dialect".into(), json!(d));
                o.insert("provider_host".into(), json!(h));
                o.insert("model".into(), json!(m));
            }
            v
        };
        let groups: Vec<serde_json::Value> = self
            .groups
            .iter_mut()
            .map(|(k, g)| group_json(Some(k), g))
            .collect();
        json!({
            "schema_version": super::SCHEMA_VERSION,
            "files": self.files,
            "skipped": self.skipped,
            "other_files": self.other_files,
            "unreadable": self.unreadable,
            "groups": groups,
            "total": group_json(None, &mut self.total),
        })
    }

    /// The summary as text tables (`scan` without `-o`): the groups, one line each; then the
    /// finding kinds that occurred and the naive strategies, as the share of each group's
    /// streams (columns numbered as the groups).
    pub fn to_text(&mut self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let cell = |v: &Option<String>| {
            crate::text::truncate(&crate::text::visible(v.as_deref().unwrap_or("-")), 34)
        };
        let rows: Vec<(String, String, String)> = self
            .groups
            .keys()
            .map(|(d, h, m)| (cell(d), cell(h), cell(m)))
            .collect();
        let width = |f: fn(&(String, String, String)) -> &String, head: &str| {
            rows.iter()
                .map(|r| f(r).chars().count())
                .max()
                .unwrap_or(0)
                .max(head.chars().count())
        };
        let (wd, wh, wm) = (
            width(|r| &r.0, "dialect"),
            width(|r| &r.1, "provider host"),
            width(|r| &r.2, "model"),
        );
        writeln!(
            s,
            "{:>3}  {:<wd$}  {:<wh$}  {:<wm$}  {:>8}  {:>7}  {:>14}  {:>14}",
            "#",
            "dialect",
            "provider host",
            "model",
            "streams",
            "not OK",
            "1st call p50",
            "1st call p95"
        )
        .ok();
        let groups: Vec<&mut GroupStats> = self.groups.values_mut().collect();
        let line = |s: &mut String, no: &str, r: (&str, &str, &str), g: &mut GroupStats| {
            let p50 = duration(g.first_call_quantile(0.5));
            let p95 = duration(g.first_call_quantile(0.95));
            writeln!(
                s,
                "{no:>3}  {:<wd$}  {:<wh$}  {:<wm$}  {:>8}  {:>7}  {p50:>14}  {p95:>14}",
                r.0,
                r.1,
                r.2,
                g.streams,
                share(g.not_ok, g.streams),
            )
            .ok();
        };
        for (i, (g, r)) in groups.into_iter().zip(&rows).enumerate() {
            line(&mut s, &(i + 1).to_string(), (&r.0, &r.1, &r.2), g);
        }
        line(&mut s, "", ("all", "", ""), &mut self.total);
        // The shares below have a column per group; past MATRIX_GROUPS groups, one per dialect
        // (each group's figures are in `scan --json`).
        let by_dialect;
        let (groups, labels): (Vec<&GroupStats>, Vec<String>) =
            if self.groups.len() <= MATRIX_GROUPS {
                (
                    self.groups.values().collect(),
                    (1..=self.groups.len()).map(|i| i.to_string()).collect(),
                )
            } else {
                writeln!(s, "\n(shares per dialect below; per group: scan --json)").ok();
                by_dialect = self.by_dialect();
                (
                    by_dialect.values().collect(),
                    by_dialect
                        .keys()
                        .map(|d| short_dialect(d.as_deref()))
                        .collect(),
                )
            };
        let header = |s: &mut String, title: &str, w: usize| {
            write!(s, "\n{title}\n{:<w$}", "").ok();
            for label in &labels {
                write!(s, "  {label:>6}").ok();
            }
            writeln!(s, "  {:>6}", "all").ok();
        };
        let kinds_w = self
            .total
            .kinds
            .keys()
            .map(|k| k.len())
            .max()
            .unwrap_or(0)
            .max(24);
        header(&mut s, "finding kind (share of streams)", kinds_w + 2);
        if self.total.kinds.is_empty() {
            writeln!(s, "  (none)").ok();
        }
        for (kind, &n) in &self.total.kinds {
            write!(s, "  {kind:<kinds_w$}").ok();
            for g in &groups {
                let k = g.kinds.get(kind).copied().unwrap_or(0);
                write!(s, "  {:>6}", share(k, g.streams)).ok();
            }
            writeln!(s, "  {:>6}", share(n, self.total.streams)).ok();
        }
        header(
            &mut s,
            "naive strategy fails (share of streams it ran on)",
            kinds_w + 2,
        );
        for (i, st) in Strategy::ALL.iter().enumerate() {
            write!(s, "  {:<kinds_w$}", st.name()).ok();
            let get = |v: &[u64]| v.get(i).copied().unwrap_or(0);
            for g in &groups {
                write!(s, "  {:>6}", share(get(&g.naive_failed), get(&g.naive_ran))).ok();
            }
            let t = &self.total;
            writeln!(s, "  {:>6}", share(get(&t.naive_failed), get(&t.naive_ran))).ok();
        }
        writeln!(s, "\n{}", self.last_line(None)).ok();
        s
    }
}

/// Up to this many groups, the shares have a column per group; past it, one per dialect.
const MATRIX_GROUPS: usize = 10;

/// A dialect's name in at most 6 characters (a column head): the dialect table's short name
/// ([`crate::dialect::DialectKind::short`]), else the name cut.
fn short_dialect(d: Option<&str>) -> String {
    let d = d.unwrap_or("-");
    let short = match crate::dialect::DialectKind::from_name(d) {
        Some(k) => k.short(),
        None => d,
    };
    short.chars().take(6).collect()
}

impl Summary {
    /// The groups merged per dialect.
    fn by_dialect(&self) -> BTreeMap<Option<String>, GroupStats> {
        let mut out: BTreeMap<Option<String>, GroupStats> = BTreeMap::new();
        for ((d, _, _), g) in &self.groups {
            let m = out.entry(d.clone()).or_default();
            m.streams += g.streams;
            m.not_ok += g.not_ok;
            for (k, n) in &g.kinds {
                *m.kinds.entry(k.clone()).or_default() += n;
            }
            m.naive_ran
                .resize(g.naive_ran.len().max(m.naive_ran.len()), 0);
            m.naive_failed
                .resize(g.naive_failed.len().max(m.naive_failed.len()), 0);
            for (i, n) in g.naive_ran.iter().enumerate() {
                m.naive_ran[i] += n;
            }
            for (i, n) in g.naive_failed.iter().enumerate() {
                m.naive_failed[i] += n;
            }
        }
        out
    }
}

/// `n` of `of` as a percentage with one decimal (`-` when `of` is 0).
fn share(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", n as f64 * 100.0 / of as f64)
    }
}

/// Microseconds as milliseconds or seconds (`-` when unknown).
fn duration(us: Option<u64>) -> String {
    match us {
        None => "-".into(),
        Some(us) if us < 10_000_000 => format!("{:.1} ms", us as f64 / 1000.0),
        Some(us) => format!("{:.2} s", us as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_disc_is_the_smallest_value_reaching_the_share() {
        // percentile_disc's definition: [2, 8, 8, 40] at 0.6 is 8 (cume_dist 0.75 ≥ 0.6).
        assert_eq!(quantile_disc(&mut [40, 8, 2, 8], 0.6), Some(8));
        assert_eq!(quantile_disc(&mut [40, 8, 2, 8], 0.5), Some(8));
        assert_eq!(quantile_disc(&mut [40, 8, 2, 8], 0.25), Some(2));
        assert_eq!(quantile_disc(&mut [40, 8, 2, 8], 0.95), Some(40));
        assert_eq!(quantile_disc(&mut [7], 0.5), Some(7));
        assert_eq!(quantile_disc(&mut [1, 2], 0.0), Some(1));
        assert_eq!(quantile_disc(&mut [], 0.5), None);
    }

    #[test]
    fn groups_count_streams_kinds_and_strategies() {
        let mut a = StreamRow::unreadable("x", "e");
        a.verdict = super::super::RowVerdict::Ok;
        a.dialect = Some("openai-chat".into());
        a.finding_kinds = Some("done-sentinel,split-line".into());
        a.naive = vec![Some(true); Strategy::ALL.len()];
        a.naive[0] = Some(false);
        a.naive[7] = None;
        a.first_call_us = Some(10);
        let mut b = a.clone();
        b.verdict = super::super::RowVerdict::NotOk;
        b.finding_kinds = Some("done-sentinel".into());
        b.first_call_us = Some(30);
        let c = StreamRow::unreadable("y", "e");
        let mut s = Summary::default();
        for r in [&a, &b, &c] {
            s.add(r);
        }
        assert_eq!(s.groups.len(), 2);
        let g = &s.groups[&(Some("openai-chat".into()), None, None)];
        assert_eq!((g.streams, g.not_ok), (2, 1));
        assert_eq!(g.kinds["done-sentinel"], 2);
        assert_eq!(g.kinds["split-line"], 1);
        assert_eq!((g.naive_ran[0], g.naive_failed[0]), (2, 2));
        assert_eq!((g.naive_ran[7], g.naive_failed[7]), (0, 0));
        assert_eq!((s.total.streams, s.total.not_ok), (3, 2));
        let j = s.to_json();
        assert_eq!(j["total"]["first_call"]["p50_us"], 10);
        assert_eq!(j["total"]["first_call"]["p95_us"], 30);
        let text = s.to_text();
        assert!(text.contains("openai-chat"), "{text}");
        assert!(text.contains("66.7%"), "{text}");
    }

    /// Every dialect has its own column head of at most six characters.
    #[test]
    fn short_dialect_names_are_distinct_and_short() {
        let heads: std::collections::HashSet<String> = crate::dialect::DialectKind::ALL
            .iter()
            .map(|d| short_dialect(Some(d.name())))
            .collect();
        assert_eq!(
            heads.len(),
            crate::dialect::DialectKind::ALL.len(),
            "{heads:?}"
        );
        for d in crate::dialect::DialectKind::ALL {
            assert_eq!(short_dialect(Some(d.name())), d.short());
            assert!(d.short().chars().count() <= 6, "{}", d.short());
        }
        assert_eq!(short_dialect(Some("someone-elses")), "someon");
    }
}
