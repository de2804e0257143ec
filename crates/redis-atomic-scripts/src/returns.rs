//! The `returns:` line: every reply shape a script may return, machine-readable.
//!
//! Scripts return tagged arrays, a status word first: `{'acquired', fence, ttl}`. The header
//! declares each shape; `build.rs` turns the declaration into a typed reply enum, so bindings
//! never decode by hand, and [`crate::check`] fails when a body returns a status word its header
//! does not declare (or declares one it never returns).
//!
//! ```text
//! returns = shape { " | " shape }
//! shape   = "{" "'" status "'" { ", " item } "}"
//! item    = field | group
//! field   = name [ ":" type ] [ "?" ]                 ("?": may be absent; trailing only)
//! group   = name ":" "[" field { ", " field } "]" [ " * " count ]
//! type    = uint | int | bool | ms | us | fence | bytes | str | text | word { "|" word }
//! word    = "'" name "'"
//! ```
//!
//! A field without a type is `uint`. A group repeats to the end of the reply; `* count` names an
//! earlier field that must equal the number of repetitions. Types: `uint`/`int` are integers
//! (an integer reply or a decimal string), `bool` is 0 or 1, `ms`/`us` are non-negative
//! durations, `fence` a fencing token, `bytes` a binary-safe string, `str` UTF-8 text, `text` any
//! bytes shown as text (invalid UTF-8 replaced), and a word list one of those status-like words.

use std::collections::{HashMap, HashSet};

/// Every shape a script may return.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Returns {
    /// The shapes, in header order.
    pub shapes: Vec<Shape>,
}

/// One reply shape: a status word and the items after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The status word.
    pub status: String,
    /// The items after the status.
    pub items: Vec<Item>,
}

/// One item of a shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A single value.
    Field(Field),
    /// Repeated groups of values, to the end of the reply.
    Group(Group),
}

/// A named, typed value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Name (lower snake case).
    pub name: String,
    /// Type.
    pub ty: Type,
    /// May be absent (then every later item must be optional too).
    pub optional: bool,
}

/// A repeated group of fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Name (lower snake case).
    pub name: String,
    /// The fields of one repetition.
    pub fields: Vec<Field>,
    /// An earlier field that counts the repetitions.
    pub count: Option<String>,
}

/// The type of a field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    /// Non-negative integer.
    Uint,
    /// Signed integer.
    Int,
    /// 0 or 1.
    Bool,
    /// Non-negative milliseconds.
    Ms,
    /// Non-negative microseconds.
    Us,
    /// A fencing token.
    Fence,
    /// Binary-safe bytes.
    Bytes,
    /// UTF-8 text.
    Str,
    /// Bytes shown as text (invalid UTF-8 replaced).
    Text,
    /// One of these words.
    Word(Vec<String>),
}

impl Returns {
    /// Every status word, in header order, without repeats.
    pub fn statuses(&self) -> Vec<&str> {
        // `parse` refuses a status declared twice, so the shapes' words are already unique.
        self.shapes.iter().map(|s| s.status.as_str()).collect()
    }
}

/// Whether `s` is a lower snake case name: `[a-z][a-z0-9_]*`.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Parses a `returns:` value.
pub fn parse(text: &str) -> Result<Returns, String> {
    // Sets, not scans of what came before: a header line may hold many thousand shapes, and
    // the checks must stay linear in its length.
    let mut shapes: Vec<Shape> = Vec::new();
    let mut seen = HashSet::new();
    for part in split_top(text, '|', '{', '}')? {
        let shape = parse_shape(part.trim())?;
        if !seen.insert(shape.status.clone()) {
            return Err(format!("status `{}` declared twice", shape.status));
        }
        shapes.push(shape);
    }
    check_groups(&shapes)?;
    Ok(Returns { shapes })
}

/// Splits `text` at `sep` outside `open`..`close` nesting and quotes.
fn split_top(text: &str, sep: char, open: char, close: char) -> Result<Vec<&str>, String> {
    let (mut depth, mut quoted, mut start) = (0usize, false, 0);
    let mut parts = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            _ if quoted => {}
            c if c == open => depth += 1,
            c if c == close => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("unbalanced `{close}` in `{text}`"))?;
            }
            c if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if depth != 0 || quoted {
        return Err(format!("unbalanced brackets or quotes in `{text}`"));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_shape(text: &str) -> Result<Shape, String> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or_else(|| format!("a reply shape is `{{'status', field, ...}}`, not `{text}`"))?;
    let mut parts = split_top(inner, ',', '[', ']')?.into_iter().map(str::trim);
    let status = parts
        .next()
        .and_then(word)
        .ok_or_else(|| format!("a reply shape starts with a quoted status word: `{text}`"))?;
    let mut items = Vec::new();
    for part in parts {
        items.push(parse_item(part)?);
    }
    check_items(&status, &items)?;
    Ok(Shape { status, items })
}

/// `'name'` → `name`.
fn word(text: &str) -> Option<String> {
    let w = text.strip_prefix('\'')?.strip_suffix('\'')?;
    is_name(w).then(|| w.to_string())
}

fn parse_item(text: &str) -> Result<Item, String> {
    if let Some((name, rest)) = text.split_once(':') {
        let rest = rest.trim();
        if let Some(group) = rest.strip_prefix('[') {
            return parse_group(name.trim(), group).map(Item::Group);
        }
    }
    parse_field(text).map(Item::Field)
}

fn parse_group(name: &str, rest: &str) -> Result<Group, String> {
    let (fields, count) = rest
        .split_once(']')
        .ok_or_else(|| format!("group `{name}` lacks its `]`"))?;
    let count = match count.trim() {
        "" => None,
        c => Some(
            c.strip_prefix('*')
                .map(str::trim)
                .filter(|c| is_name(c))
                .ok_or_else(|| format!("group `{name}`: after `]` only `* count`, not `{c}`"))?
                .to_string(),
        ),
    };
    let fields = fields
        .split(',')
        .map(|f| parse_field(f.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if fields.iter().any(|f| f.optional) {
        return Err(format!("group `{name}`: its fields cannot be optional"));
    }
    if !is_name(name) {
        return Err(format!("`{name}` is not a lower snake case name"));
    }
    Ok(Group {
        name: name.to_string(),
        fields,
        count,
    })
}

fn parse_field(text: &str) -> Result<Field, String> {
    let (text, optional) = match text.strip_suffix('?') {
        Some(t) => (t, true),
        None => (text, false),
    };
    let (name, ty) = match text.split_once(':') {
        Some((n, t)) => (n.trim(), parse_type(t.trim())?),
        None => (text.trim(), Type::Uint),
    };
    if !is_name(name) {
        return Err(format!("`{name}` is not a lower snake case field name"));
    }
    Ok(Field {
        name: name.to_string(),
        ty,
        optional,
    })
}

fn parse_type(text: &str) -> Result<Type, String> {
    Ok(match text {
        "uint" => Type::Uint,
        "int" => Type::Int,
        "bool" => Type::Bool,
        "ms" => Type::Ms,
        "us" => Type::Us,
        "fence" => Type::Fence,
        "bytes" => Type::Bytes,
        "str" => Type::Str,
        "text" => Type::Text,
        words if words.starts_with('\'') => Type::Word(
            words
                .split('|')
                .map(|w| word(w.trim()).ok_or_else(|| format!("bad word `{w}` in `{words}`")))
                .collect::<Result<_, _>>()?,
        ),
        other => {
            return Err(format!(
            "unknown type `{other}` (uint, int, bool, ms, us, fence, bytes, str, text, 'word'|...)"
        ))
        }
    })
}

/// Names unique within a shape, optional fields only at the end, a group last and its count an
/// earlier unsigned field.
fn check_items(status: &str, items: &[Item]) -> Result<(), String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut optional = false;
    for (i, item) in items.iter().enumerate() {
        let name = match item {
            Item::Field(f) => {
                if optional && !f.optional {
                    return Err(format!(
                        "`{status}`: `{}` follows an optional field",
                        f.name
                    ));
                }
                optional |= f.optional;
                &f.name
            }
            Item::Group(g) => {
                if i + 1 != items.len() || optional {
                    return Err(format!(
                        "`{status}`: group `{}` must be the last item",
                        g.name
                    ));
                }
                if let Some(count) = &g.count {
                    let counted = items[..i].iter().any(
                        |it| matches!(it, Item::Field(f) if f.name == *count && f.ty == Type::Uint),
                    );
                    if !counted {
                        return Err(format!(
                            "`{status}`: `* {count}` must name an earlier uint field"
                        ));
                    }
                }
                &g.name
            }
        };
        if !seen.insert(name) {
            return Err(format!("`{status}`: field name `{name}` used twice"));
        }
    }
    Ok(())
}

/// A group name used in several shapes must mean the same fields everywhere (it becomes one type).
fn check_groups(shapes: &[Shape]) -> Result<(), String> {
    let mut first: HashMap<&str, &Vec<Field>> = HashMap::new();
    let groups = shapes
        .iter()
        .flat_map(|s| &s.items)
        .filter_map(|i| match i {
            Item::Group(g) => Some(g),
            Item::Field(_) => None,
        });
    for g in groups {
        if *first.entry(&g.name).or_insert(&g.fields) != &g.fields {
            return Err(format!(
                "group `{}` has different fields in two shapes",
                g.name
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The grammar's features: types, words, optional fields, counted groups.
    #[test]
    fn parses_the_grammar() {
        let r = parse(
            "{'claimed', now_ms, count, jobs:[id:str, fence:fence, payload:bytes] * count} \
             | {'empty', next_due:ms?} | {'exists', state:'queued'|'dead'}",
        )
        .unwrap();
        assert_eq!(r.statuses(), ["claimed", "empty", "exists"]);
        let Item::Group(g) = &r.shapes[0].items[2] else {
            panic!("group expected")
        };
        assert_eq!((g.fields.len(), g.count.as_deref()), (3, Some("count")));
        assert!(matches!(&r.shapes[1].items[0], Item::Field(f) if f.optional && f.ty == Type::Ms));
        assert!(
            matches!(&r.shapes[2].items[0], Item::Field(Field { ty: Type::Word(w), .. }) if w.len() == 2)
        );
    }

    /// Malformed declarations are errors with a reason.
    #[test]
    fn refuses_malformed_shapes() {
        for bad in [
            "ok",
            "{ok}",
            "{'ok', a} | {'ok', b}",
            "{'ok', a, a}",
            "{'ok', a?, b}",
            "{'ok', g:[a], b}",
            "{'ok', g:[a] * n}",
            "{'ok', a:float}",
            "{'ok', A}",
            "{'ok', g:[a]} | {'no', g:[b]}",
            "{'ok', 'x'",
        ] {
            assert!(parse(bad).is_err(), "{bad} parsed");
        }
    }

    proptest! {
        /// Any input is an answer, never a panic.
        #[test]
        fn never_panics(text in ".{0,80}") {
            let _ = parse(&text);
        }

        /// Near-miss inputs built from the grammar's own symbols are answered too.
        #[test]
        fn never_panics_on_symbols(text in "[{}\\[\\]'|,:?* a-z]{0,60}") {
            let _ = parse(&text);
        }
    }
}
