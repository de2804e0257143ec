//! A script as the server will see it: `--@include name` lines expanded exactly as `build.rs`
//! expands them, with a map back to the file and line each expanded line came from, so findings
//! in an included fragment point into the fragment.

use std::path::{Path, PathBuf};

/// Where an expanded line came from.
#[derive(Clone, Debug)]
pub struct Origin {
    /// Index into [`Expanded::files`].
    pub file: usize,
    /// 1-based line in that file.
    pub line: usize,
}

/// An expanded source and its line map.
#[derive(Clone, Debug)]
pub struct Expanded {
    /// The text to parse.
    pub text: String,
    /// Display names of the files involved; the script itself first.
    pub files: Vec<String>,
    /// One entry per line of `text`.
    pub lines: Vec<Origin>,
}

impl Expanded {
    /// A source that includes nothing (or whose includes were expanded already).
    pub fn plain(name: &str, text: &str) -> Expanded {
        Expanded {
            text: text.to_string(),
            files: vec![name.to_string()],
            lines: (1..=text.lines().count().max(1))
                .map(|line| Origin { file: 0, line })
                .collect(),
        }
    }

    /// The file name and line of expanded line `line` (1-based).
    pub fn locate(&self, line: usize) -> (&str, usize) {
        match self.lines.get(line.saturating_sub(1)) {
            Some(o) => (&self.files[o.file], o.line),
            None => (&self.files[0], line),
        }
    }

    /// Rule ids allowed on expanded line `line` by a `-- redis-atomic-lint: allow id[,id]`
    /// comment on that line or the line above.
    pub fn allowed(&self, line: usize, rule: &str) -> bool {
        let lines: Vec<&str> = self.text.lines().collect();
        [line, line.saturating_sub(1)]
            .iter()
            .filter(|l| **l >= 1)
            .filter_map(|l| lines.get(l - 1))
            .any(|text| allows(text, rule))
    }
}

fn allows(line: &str, rule: &str) -> bool {
    let Some((_, rest)) = line.split_once("redis-atomic-lint: allow") else {
        return false;
    };
    rest.split(|c: char| c.is_whitespace() || c == ',')
        .take_while(|w| !w.starts_with("--"))
        .any(|w| w == rule)
}

/// Reads `path` and expands its includes from `include_dir` (default: `include/` next to it).
pub fn load(path: &Path, include_dir: Option<&Path>) -> Result<Expanded, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let dir = include_dir.map(Path::to_path_buf).unwrap_or_else(|| {
        path.parent()
            .unwrap_or_else(|| Path::new("."))
            .join("include")
    });
    expand(&path.display().to_string(), &text, &dir)
}

fn expand(name: &str, text: &str, dir: &Path) -> Result<Expanded, String> {
    let mut out = Expanded {
        text: String::with_capacity(text.len()),
        files: vec![name.to_string()],
        lines: Vec::new(),
    };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let Some(inc) = line.trim_end().strip_prefix("--@include ") else {
            out.text.push_str(line);
            out.lines.push(Origin {
                file: 0,
                line: i + 1,
            });
            continue;
        };
        let inc_path: PathBuf = dir.join(format!("{}.lua", inc.trim()));
        let body = std::fs::read_to_string(&inc_path)
            .map_err(|e| format!("{name}:{}:1: unknown include `{}` ({e})", i + 1, inc.trim()))?;
        let file = out.files.len();
        out.files.push(inc_path.display().to_string());
        for (j, inc_line) in body.split_inclusive('\n').enumerate() {
            out.text.push_str(inc_line);
            out.lines.push(Origin { file, line: j + 1 });
        }
        if !body.ends_with('\n') {
            out.text.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Suppression comments name rules exactly, on the line or the line above.
    #[test]
    fn allow_comments() {
        let e = Expanded::plain(
            "x",
            "a\n-- redis-atomic-lint: allow expire-can-shorten -- owner checked\nb\n",
        );
        assert!(e.allowed(3, "expire-can-shorten"));
        assert!(!e.allowed(3, "expire"));
        assert!(!e.allowed(1, "expire-can-shorten"));
        assert!(!e.allowed(3, "owner"));
    }
}
