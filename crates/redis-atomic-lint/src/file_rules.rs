//! Rules about the file rather than the code: the shebang (script flags or library name) and,
//! for scripts in redis-atomic's own header format, the header against the body — judged by the
//! very parser and checks `build.rs` uses (`redis-atomic-scripts`).

use super::walk::{tok_pos, Pos, RawFinding};
use full_moon::ast::Block;
use full_moon::node::Node;
use full_moon::tokenizer::TokenType;
use redis_atomic_scripts::{check, header};
use std::collections::HashSet;

/// What the shebang says the file is.
pub struct Kind {
    /// A Function library (`#!lua name=...`).
    pub library: bool,
    /// A script's flags (`None`: no usable shebang, or a library).
    pub flags: Option<Vec<String>>,
}

fn at(line: usize, rule: &'static str, message: String) -> RawFinding {
    RawFinding {
        pos: Pos {
            line: line.max(1),
            col: 1,
        },
        rule,
        message,
    }
}

/// Reads the shebang; reports a missing or malformed one.
pub fn shebang(text: &str, out: &mut Vec<RawFinding>) -> Kind {
    let first = text.lines().next().unwrap_or("");
    let Some(rest) = first.strip_prefix("#!lua") else {
        let message = if first.starts_with("#!") {
            format!("`{first}`: only #!lua is understood by Redis")
        } else {
            "no #!lua shebang: the script runs without flags".to_string()
        };
        let rule = if first.starts_with("#!") {
            "bad-shebang"
        } else {
            "missing-shebang"
        };
        out.push(at(1, rule, message));
        return Kind {
            library: false,
            flags: None,
        };
    };
    let (mut library, mut flags) = (false, Vec::new());
    for part in rest.split_whitespace() {
        if part.strip_prefix("name=").is_some_and(|n| !n.is_empty()) {
            library = true;
        } else if let Some(list) = part.strip_prefix("flags=") {
            for flag in list.split(',').filter(|f| !f.is_empty()) {
                if !header::KNOWN_FLAGS.contains(&flag) {
                    out.push(at(1, "bad-shebang", format!("unknown flag `{flag}`")));
                }
                flags.push(flag.to_string());
            }
        } else {
            out.push(at(
                1,
                "bad-shebang",
                format!("unknown shebang option `{part}`"),
            ));
        }
    }
    if library && !flags.is_empty() {
        out.push(at(
            1,
            "bad-shebang",
            "a library's shebang takes no flags: give them per function in register_function"
                .into(),
        ));
    }
    Kind {
        library,
        flags: (!library).then_some(flags),
    }
}

/// For a script in our header format (`--- field: value` after the shebang): the header parses
/// (its machine-readable `returns:` line included), and its keys, args and status words agree
/// with the body, as `check::check_body` judges them for `build.rs`. Each problem points at the
/// header line it concerns; several on one line make one finding. Flags against writes are
/// `writes-under-no-writes` / `missing-no-writes`, judged on the syntax tree, so they are not
/// repeated here.
pub fn header_rules(text: &str, out: &mut Vec<RawFinding>) {
    let has_header = text.lines().nth(1).is_some_and(|l| l.starts_with("--- "));
    if !has_header || !text.starts_with("#!lua") {
        return;
    }
    let parsed = match header::parse(text) {
        Ok(h) => h,
        Err(e) => {
            out.push(at(e.line, "header-invalid", e.message));
            return;
        }
    };
    // Lines looked up once, sets instead of scans: a header may declare tens of thousands of
    // words, each one a problem, and the work must stay linear in the file's length.
    let line_of = |field: &str| {
        text.lines()
            .position(|l| l.starts_with(&format!("--- {field}:")))
            .map_or(1, |i| i + 1)
    };
    let body = header::body(text);
    let statuses: HashSet<String> = check::check_statuses(&parsed, body).into_iter().collect();
    let mut by_field: [(usize, Vec<String>); 3] =
        ["returns", "keys", "args"].map(|f| (line_of(f), Vec::new()));
    for problem in check::check_body(&parsed, body) {
        let field = if statuses.contains(&problem) {
            0
        } else if problem.contains("KEYS") {
            1
        } else if problem.contains("ARGV") {
            2
        } else {
            continue;
        };
        by_field[field].1.push(problem);
    }
    let mut by_line: Vec<(usize, Vec<String>)> = Vec::new();
    for (line, problems) in by_field.into_iter().filter(|(_, p)| !p.is_empty()) {
        match by_line.iter_mut().find(|(l, _)| *l == line) {
            Some((_, all)) => all.extend(problems),
            None => by_line.push((line, problems)),
        }
    }
    for (line, problems) in by_line {
        out.push(at(line, "header-body-mismatch", summary(&problems)));
    }
}

/// The first few problems, and how many more: one finding stays one readable line.
fn summary(problems: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = problems[..problems.len().min(SHOWN)].join("; ");
    if problems.len() > SHOWN {
        text.push_str(&format!(" (and {} more)", problems.len() - SHOWN));
    }
    text
}

/// String literals holding a constant `{hash tag}` (`'app:{global}:n'`): the tag can never vary,
/// so every key built with it lands on one slot. (Dynamic tags are built by concatenation, so no
/// single literal holds both braces around a name.)
pub fn constant_tags(block: &Block, out: &mut Vec<RawFinding>) {
    // Back to front: full_moon's forward token iterator removes from the front of a Vec (time
    // quadratic in the file's length); its reverse pops. Findings are sorted afterwards.
    for token in block.tokens().rev() {
        let TokenType::StringLiteral { literal, .. } = token.token_type() else {
            continue;
        };
        if let Some(tag) = constant_tag(literal) {
            out.push(RawFinding {
                pos: tok_pos(token),
                rule: "constant-hash-tag",
                message: format!(
                    "`{{{tag}}}` is the same hash tag on every call: all its keys share one slot"
                ),
            });
        }
    }
}

/// The first `{name}` of `text` whose name looks like a tag (not JSON, not a format pattern), in
/// a literal that looks like a key (no whitespace: not a message such as `'ERR {n} too big'`).
fn constant_tag(text: &str) -> Option<&str> {
    if text.contains(char::is_whitespace) {
        return None;
    }
    let open = text.find('{')?;
    let rest = &text[open + 1..];
    let tag = &rest[..rest.find('}')?];
    let tagish = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    (!tag.is_empty() && tag.chars().all(tagish)).then_some(tag)
}
