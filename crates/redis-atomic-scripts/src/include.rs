//! `--@include NAME` expansion: the one expander, used by `build.rs` (the bytes Redis runs and
//! their SHA1), by `lint`, and by `scripts check`.
//!
//! A line `--@include NAME` is replaced by the fragment `NAME` (a file `include/NAME.lua`, or
//! whatever the caller's resolver returns). Fragments do not include others: one level keeps
//! the expanded text easy to read and the line map exact. The result keeps a map from every
//! expanded line back to the file and line it came from, so a lint finding or a header error
//! inside a fragment points into the fragment.

/// Largest expanded source, in bytes: a 1 MiB script of `--@include` lines naming a 1 MiB
/// fragment would otherwise expand to tens of gigabytes.
pub const MAX_EXPANDED_BYTES: usize = 4 << 20;

/// Where an expanded line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// Index into [`Expanded::files`].
    pub file: usize,
    /// 1-based line in that file.
    pub line: usize,
}

/// An expanded source and its line map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expanded {
    /// The text to run or parse.
    pub text: String,
    /// Display names of the files involved; the script itself first.
    pub files: Vec<String>,
    /// One entry per line of `text`.
    pub lines: Vec<Origin>,
}

/// An include that could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncludeError {
    /// The file whose line names the include.
    pub file: String,
    /// 1-based line of the `--@include`.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for IncludeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for IncludeError {}

/// A fragment found by name: its display name (e.g. a path) and text.
pub struct Fragment {
    /// Display name, used in the line map.
    pub name: String,
    /// The fragment's text.
    pub text: String,
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
}

/// The include named on `line`, if it is an include line.
pub fn include_name(line: &str) -> Option<&str> {
    line.trim_end().strip_prefix("--@include ").map(str::trim)
}

/// Expands every `--@include NAME` line of `text` (named `name` in the line map) with what
/// `resolve(NAME)` finds: `Ok(None)` means no such fragment, `Err` a fragment that could not be
/// read. A fragment that itself includes is refused.
pub fn expand(
    name: &str,
    text: &str,
    resolve: &mut dyn FnMut(&str) -> Result<Option<Fragment>, String>,
) -> Result<Expanded, IncludeError> {
    let mut out = Expanded {
        text: String::with_capacity(text.len()),
        files: vec![name.to_string()],
        lines: Vec::new(),
    };
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let fail = |message: String| IncludeError {
            file: name.to_string(),
            line: i + 1,
            message,
        };
        let Some(inc) = include_name(line) else {
            out.text.push_str(line);
            out.lines.push(Origin {
                file: 0,
                line: i + 1,
            });
            continue;
        };
        let fragment = resolve(inc)
            .map_err(|e| fail(format!("include `{inc}`: {e}")))?
            .ok_or_else(|| fail(format!("unknown include `{inc}`")))?;
        if let Some(nested) = fragment.text.lines().find_map(include_name) {
            return Err(fail(format!(
                "include `{inc}` includes `{nested}`: fragments may not include others"
            )));
        }
        let file = out.files.len();
        out.files.push(fragment.name);
        for (j, inc_line) in fragment.text.split_inclusive('\n').enumerate() {
            out.text.push_str(inc_line);
            out.lines.push(Origin { file, line: j + 1 });
        }
        if !fragment.text.ends_with('\n') {
            out.text.push('\n');
        }
        if out.text.len() > MAX_EXPANDED_BYTES {
            return Err(fail(format!(
                "the source grows past {MAX_EXPANDED_BYTES} bytes with its includes"
            )));
        }
    }
    Ok(out)
}

/// A resolver reading `dir/NAME.lua` (fragment names are lower snake case, so they cannot leave
/// `dir`).
pub fn from_dir(
    dir: &std::path::Path,
) -> impl FnMut(&str) -> Result<Option<Fragment>, String> + '_ {
    move |inc: &str| {
        if !crate::returns::is_name(inc) {
            return Ok(None);
        }
        let path = dir.join(format!("{inc}.lua"));
        match crate::load::read_text(&path) {
            Ok(text) => Ok(Some(Fragment {
                name: path.display().to_string(),
                text,
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(name: &str) -> Result<Option<Fragment>, String> {
        Ok(match name {
            "two" => Some(Fragment {
                name: "two.lua".into(),
                text: "x = 1\ny = 2".into(),
            }),
            "nested" => Some(Fragment {
                name: "nested.lua".into(),
                text: "--@include two\n".into(),
            }),
            _ => None,
        })
    }

    /// Expanded lines map back to their file and line.
    #[test]
    fn line_map_points_into_fragments() {
        let e = expand("s.lua", "a\n--@include two\nb\n", &mut frag).unwrap();
        assert_eq!(e.text, "a\nx = 1\ny = 2\nb\n");
        assert_eq!(e.locate(3), ("two.lua", 2));
        assert_eq!(e.locate(4), ("s.lua", 3));
    }

    /// Includes cannot grow a source without bound: past [`MAX_EXPANDED_BYTES`] the including
    /// line is an error.
    #[test]
    fn expansion_is_bounded() {
        let mut big = |_: &str| -> Result<Option<Fragment>, String> {
            Ok(Some(Fragment {
                name: "big.lua".into(),
                text: "-- x\n".repeat(200_000),
            }))
        };
        let text = "--@include big\n".repeat(10_000);
        let e = expand("s.lua", &text, &mut big).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("grows past"), "{e}");
    }

    /// Unknown and nested includes are errors naming the including line.
    #[test]
    fn bad_includes_name_their_line() {
        let e = expand("s.lua", "a\n--@include nope\n", &mut frag).unwrap_err();
        assert_eq!((e.line, e.file.as_str()), (2, "s.lua"));
        assert!(expand("s.lua", "--@include nested\n", &mut frag).is_err());
    }
}
