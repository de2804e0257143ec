//! What `scripts check` found, and how it prints: a checklist per script (`[x]` kept, `[ ]`
//! missing with the findings under it, `[?]` not judged because the header does not parse),
//! folder-level findings (library.version, scripts.lock), then the fix of every lint rule hit.

use super::checklist::Item;
use redis_atomic_lint::rules;
use serde::Serialize;
use std::io::Write;

/// One finding: where, which rule, what.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Finding {
    /// File (a fragment when the finding is inside one).
    pub path: String,
    /// 1-based line; 0 when the whole file is concerned.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub col: usize,
    /// Rule id: a lint rule, or one of `scripts check`'s own (`lock-*`, `library-version`).
    pub rule: String,
    /// What was found.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}: {}: {}", self.path, self.rule, self.message),
            (l, 0) => write!(f, "{}:{l}: {}: {}", self.path, self.rule, self.message),
            (l, c) => write!(f, "{}:{l}:{c}: {}: {}", self.path, self.rule, self.message),
        }
    }
}

/// Whether an item is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Status {
    /// Kept.
    Ok,
    /// Findings say what is missing.
    Missing,
    /// Not judged (the header does not parse).
    Unknown,
}

/// One checklist line of one script.
#[derive(Debug, Serialize)]
pub(super) struct Entry {
    /// Which item.
    pub item: Item,
    /// Its title.
    pub title: &'static str,
    /// Kept, missing or not judged.
    pub status: Status,
    /// What the header says about it (or why it was not judged).
    pub detail: String,
    /// What is missing, and where.
    pub findings: Vec<Finding>,
}

/// One script's checklist.
#[derive(Debug, Serialize)]
pub(super) struct ScriptReport {
    /// Script name (the file stem).
    pub name: String,
    /// The file.
    pub path: String,
    /// The checklist, in [`Item::ALL`] order.
    pub checklist: Vec<Entry>,
}

impl ScriptReport {
    /// A checklist with every item not judged yet.
    pub fn new(name: &str, path: &str) -> ScriptReport {
        let checklist = Item::ALL
            .iter()
            .map(|&item| Entry {
                item,
                title: item.title(),
                status: Status::Unknown,
                detail: String::new(),
                findings: Vec::new(),
            })
            .collect();
        ScriptReport {
            name: name.to_string(),
            path: path.to_string(),
            checklist,
        }
    }

    /// The entry of `item`.
    pub fn entry(&mut self, item: Item) -> &mut Entry {
        let i = Item::ALL.iter().position(|i| *i == item).unwrap_or(0);
        &mut self.checklist[i]
    }

    /// Records a finding against `item`.
    pub fn add(&mut self, item: Item, finding: Finding) {
        let entry = self.entry(item);
        entry.findings.push(finding);
        entry.status = Status::Missing;
    }

    /// Marks `item` judged: kept unless findings were recorded.
    pub fn judged(&mut self, item: Item, detail: String) {
        let entry = self.entry(item);
        entry.detail = detail;
        if entry.findings.is_empty() {
            entry.status = Status::Ok;
        }
    }

    fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.checklist.iter().flat_map(|e| &e.findings)
    }
}

/// The library the folder composes.
#[derive(Debug, Serialize)]
pub(super) struct LibraryInfo {
    /// `<NAME>_v<N>`.
    pub name: String,
    /// N, from library.version.
    pub version: u32,
    /// Prefix of every function name, `<NAME><N>_`.
    pub function_prefix: String,
}

/// Everything `scripts check` found in one folder.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    /// The folder.
    pub dir: String,
    /// Its library, when library.version is usable.
    pub library: Option<LibraryInfo>,
    /// `current`, `missing`, `stale` or `not checked`.
    pub lock: &'static str,
    /// One checklist per script.
    pub scripts: Vec<ScriptReport>,
    /// Findings about the folder rather than one script.
    pub folder: Vec<Finding>,
}

impl Report {
    /// Number of findings.
    pub fn count(&self) -> usize {
        self.folder.len()
            + self
                .scripts
                .iter()
                .map(|s| s.findings().count())
                .sum::<usize>()
    }

    /// Whether nothing was found and every item was judged.
    pub fn clean(&self) -> bool {
        self.count() == 0
            && self
                .scripts
                .iter()
                .all(|s| s.checklist.iter().all(|e| e.status == Status::Ok))
    }

    /// The report as JSON.
    pub fn write_json(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        let mut doc = serde_json::to_value(self)?;
        doc["findings"] = self.count().into();
        doc["clean"] = self.clean().into();
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        Ok(())
    }

    /// The report as text: a checklist per script, folder findings, the fixes, a summary.
    pub fn write_text(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        let lib = self.library.as_ref().map_or("no library".to_string(), |l| {
            format!(
                "library {} (functions {}<script>)",
                l.name, l.function_prefix
            )
        });
        writeln!(
            out,
            "{}: {} script(s), {lib}, scripts.lock {}",
            self.dir,
            self.scripts.len(),
            self.lock
        )?;
        for script in &self.scripts {
            writeln!(out, "\n{} ({})", script.name, script.path)?;
            for e in &script.checklist {
                let mark = match e.status {
                    Status::Ok => "[x]",
                    Status::Missing => "[ ]",
                    Status::Unknown => "[?]",
                };
                writeln!(out, "  {mark} {:<24} {}", e.title, e.detail)?;
                for f in &e.findings {
                    writeln!(out, "        {f}")?;
                }
            }
        }
        if !self.folder.is_empty() {
            writeln!(out, "\nfolder")?;
            for f in &self.folder {
                writeln!(out, "  {f}")?;
            }
        }
        self.write_fixes(out)?;
        let status = if self.clean() { "clean" } else { "not clean" };
        writeln!(
            out,
            "\n{} script(s), {} finding(s): {status}",
            self.scripts.len(),
            self.count()
        )?;
        Ok(())
    }

    /// The why and fix of every lint rule that has a finding, once each.
    fn write_fixes(&self, out: &mut dyn Write) -> anyhow::Result<()> {
        let mut hit: Vec<&str> = self
            .scripts
            .iter()
            .flat_map(|s| s.findings())
            .map(|f| f.rule.as_str())
            .collect();
        hit.sort_unstable();
        hit.dedup();
        for rule in hit.iter().filter_map(|id| rules::find(id)) {
            writeln!(out, "\n{}: {}\n  fix: {}", rule.id, rule.why, rule.fix)?;
        }
        Ok(())
    }
}
