//! The language-neutral model of a script set that the TypeScript, Java and Go emitters
//! ([`super::ts`], [`super::java`], [`super::go`]) read, so the three agree on every name and
//! rule and each emitter is only spelling.
//!
//! One script becomes a [`ScriptModel`]: its definition (name, SHA1, Function name, body, keys,
//! args, read-only, retry class, batchable) and its reply [`Variant`]s, parsed from the
//! `returns:` line by [`crate::returns`]. Field names are settled here, once:
//!
//! - a duration field carries its unit (`ttl:ms` → `ttl_ms`, `reset:us` → `reset_us`), as in the
//!   conformance vectors; a name that already ends in its unit keeps it;
//! - the status word is read through a member called `outcome` in every language (TypeScript's
//!   discriminant, Java's `outcome()`, Go's `Outcome()`), so a reply field named `outcome`
//!   (`idem_begin`'s `replay`) is spelled `outcome_value`: the one rename, the same everywhere.

use super::Library;
use crate::load::ScriptFile;
use crate::returns::{Field, Item, Type};

/// The member every reply variant answers its status word by.
pub const OUTCOME: &str = "outcome";

/// A key or argument of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Lower snake case name, without `...`.
    pub name: String,
    /// The trailing `name...` entry: any number of values.
    pub variadic: bool,
}

/// A reply field, its name settled (unit suffix, `outcome` rename).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldModel {
    /// Lower snake case name as the bindings spell it.
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// May be absent at the end of the reply.
    pub optional: bool,
}

/// A repeated group, the last item of a variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupModel {
    /// Lower snake case name.
    pub name: String,
    /// The fields of one repetition.
    pub fields: Vec<FieldModel>,
    /// The earlier field (model name) that counts the repetitions.
    pub count: Option<String>,
}

/// One reply shape: a status word, its fields, and an optional trailing group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The status word (the outcome word).
    pub status: String,
    /// Fields in reply order.
    pub fields: Vec<FieldModel>,
    /// The trailing group, if any.
    pub group: Option<GroupModel>,
}

/// Everything an emitter needs of one script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptModel {
    /// Script name, lower snake case.
    pub name: String,
    /// The header's summary.
    pub summary: String,
    /// SHA1 of `body`.
    pub sha1: String,
    /// Its Function name in the library.
    pub function_name: String,
    /// The exact source `EVALSHA` runs.
    pub body: String,
    /// Keys, in order.
    pub keys: Vec<Param>,
    /// Arguments, in order.
    pub args: Vec<Param>,
    /// Declares `no-writes` (runs by `EVALSHA_RO` / `FCALL_RO`).
    pub read_only: bool,
    /// `--- retry: safe`.
    pub retry_safe: bool,
    /// `--- batch: yes`.
    pub batchable: bool,
    /// The reply shapes, in header order.
    pub variants: Vec<Variant>,
}

impl ScriptModel {
    /// The distinct groups of its replies (two variants may repeat the same group), each once,
    /// in header order: one item type per group in every language.
    pub fn groups(&self) -> Vec<&GroupModel> {
        let mut out: Vec<&GroupModel> = Vec::new();
        for g in self.variants.iter().filter_map(|v| v.group.as_ref()) {
            if !out.iter().any(|seen| seen.name == g.name) {
                out.push(g);
            }
        }
        out
    }
}

/// A script set and its library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetModel {
    /// Library name, e.g. `redis_atomic_v6`.
    pub library: String,
    /// Every script, sorted by name.
    pub scripts: Vec<ScriptModel>,
    /// The batch entry points ([`super::batch`]), by name.
    pub batches: Vec<BatchModel>,
}

/// A batch entry point: what a client sends when several decisions of its scripts leave
/// together (its own `EVALSHA` source, or its function of the library).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchModel {
    /// `_batch`, `_batch_no_writes`, ...
    pub name: String,
    /// SHA1 of `body`.
    pub sha1: String,
    /// Its Function name in the library.
    pub function_name: String,
    /// The exact source `EVALSHA` runs.
    pub body: String,
    /// Its scripts declare `no-writes` (runs by `EVALSHA_RO` / `FCALL_RO`).
    pub read_only: bool,
    /// The names of the scripts it runs.
    pub scripts: Vec<String>,
}

/// The model of `scripts` in `lib`.
pub fn model(scripts: &[ScriptFile], lib: &Library) -> SetModel {
    let batches = super::batch::groups(scripts)
        .iter()
        .map(|g| {
            let body = super::batch::eval_source(g);
            BatchModel {
                name: g.name.clone(),
                sha1: sha1_smol::Sha1::from(&body).digest().to_string(),
                function_name: lib.function_name(&g.name),
                body,
                read_only: g.flags.iter().any(|f| f == "no-writes"),
                scripts: g.scripts.iter().map(|s| s.name.clone()).collect(),
            }
        })
        .collect();
    SetModel {
        library: lib.name.clone(),
        scripts: scripts.iter().map(|s| script(s, lib)).collect(),
        batches,
    }
}

fn script(s: &ScriptFile, lib: &Library) -> ScriptModel {
    let h = &s.header;
    ScriptModel {
        name: s.name.clone(),
        summary: h.summary.clone(),
        sha1: s.sha1.clone(),
        function_name: lib.function_name(&s.name),
        body: s.source().to_string(),
        keys: h.keys.iter().map(|k| param(k)).collect(),
        args: h.args.iter().map(|a| param(a)).collect(),
        read_only: h.read_only(),
        retry_safe: h.retry == crate::header::RetryClass::Safe,
        batchable: h.batch,
        variants: h.shapes.shapes.iter().map(variant).collect(),
    }
}

fn param(text: &str) -> Param {
    match text.strip_suffix("...") {
        Some(name) => Param {
            name: name.to_string(),
            variadic: true,
        },
        None => Param {
            name: text.to_string(),
            variadic: false,
        },
    }
}

fn variant(shape: &crate::returns::Shape) -> Variant {
    let mut out = Variant {
        status: shape.status.clone(),
        fields: Vec::new(),
        group: None,
    };
    for item in &shape.items {
        match item {
            Item::Field(f) => out.fields.push(field(f)),
            Item::Group(g) => {
                out.group = Some(GroupModel {
                    name: renamed(&g.name),
                    fields: g.fields.iter().map(field).collect(),
                    count: g.count.as_deref().map(|c| field_name_of(&shape.items, c)),
                })
            }
        }
    }
    out
}

/// The model name of the earlier field called `header_name`.
fn field_name_of(items: &[Item], header_name: &str) -> String {
    items
        .iter()
        .find_map(|i| match i {
            Item::Field(f) if f.name == header_name => Some(field(f).name),
            _ => None,
        })
        .unwrap_or_else(|| header_name.to_string())
}

fn field(f: &Field) -> FieldModel {
    let unit = match f.ty {
        Type::Ms => Some("_ms"),
        Type::Us => Some("_us"),
        _ => None,
    };
    let name = match unit {
        Some(u) if !f.name.ends_with(u) => format!("{}{u}", f.name),
        _ => f.name.clone(),
    };
    FieldModel {
        name: renamed(&name),
        ty: f.ty.clone(),
        optional: f.optional,
    }
}

fn renamed(name: &str) -> String {
    if name == OUTCOME {
        format!("{OUTCOME}_value")
    } else {
        name.to_string()
    }
}

/// A script's definition written from an emitter's `template`: each `{placeholder}` (`name`,
/// `summary`, `library`, `sha`, `function`, `body`, `keys`, `args`, `ro`, `rs`, `batch`) is
/// replaced in one pass, so a value (a summary, a Lua body) is never read as a placeholder; any
/// other brace is kept. Key and argument names are quoted with `quote` (a variadic one gets
/// `...`); `summary` and `body` come already escaped for the language.
pub fn definition(
    template: &str,
    s: &ScriptModel,
    library: &str,
    quote: char,
    summary: &str,
    body: &str,
) -> String {
    let names = |ps: &[Param]| -> String {
        let dots = |x: &Param| if x.variadic { "..." } else { "" };
        let v: Vec<String> = ps
            .iter()
            .map(|x| format!("{quote}{}{}{quote}", x.name, dots(x)))
            .collect();
        v.join(", ")
    };
    let value = |key: &str| -> Option<String> {
        Some(match key {
            "name" => s.name.clone(),
            "summary" => summary.to_string(),
            "library" => library.to_string(),
            "sha" => s.sha1.clone(),
            "function" => s.function_name.clone(),
            "body" => body.to_string(),
            "keys" => names(&s.keys),
            "args" => names(&s.args),
            "ro" => s.read_only.to_string(),
            "rs" => s.retry_safe.to_string(),
            "batch" => s.batchable.to_string(),
            _ => return None,
        })
    };
    let mut out = String::with_capacity(template.len() + body.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find('}')
            .and_then(|close| Some((close, value(&after[..close])?)))
        {
            Some((close, v)) => {
                out.push_str(&v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The cursor call that reads a field of type `ty` in a generated decoder: every language's
/// cursor has `bool`, `bytes`, `str` and `text` readers; `uint` and `int` name its unsigned and
/// signed ones, and `word` writes the call for a closed list of words.
pub fn reader(ty: &Type, uint: &str, int: &str, word: impl Fn(&[String]) -> String) -> String {
    match ty {
        Type::Uint | Type::Ms | Type::Us | Type::Fence => format!("c.{uint}()"),
        Type::Int => format!("c.{int}()"),
        Type::Bool => "c.bool()".into(),
        Type::Bytes => "c.bytes()".into(),
        Type::Str => "c.str()".into(),
        Type::Text => "c.text()".into(),
        Type::Word(words) => word(words),
    }
}

/// `not_held` → `NotHeld`.
pub fn pascal(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// `retry_after_ms` → `retryAfterMs`.
pub fn camel(name: &str) -> String {
    let p = pascal(name);
    let mut chars = p.chars();
    match chars.next() {
        Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// A string literal valid in TypeScript, Java and Go: `"` and `\` escaped, control characters
/// and everything beyond ASCII as `\uXXXX` (UTF-16 units; Go gets `\U` for the rest).
pub fn quoted(text: &str, go: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if go => out.push_str(&format!("\\U{:08x}", u32::from(c))),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}

/// Fails when two statuses of a script spell the same type name (`a_1`, `a1`).
pub fn check_variants(s: &ScriptModel) -> Result<(), String> {
    let mut seen = Vec::new();
    for v in &s.variants {
        let p = pascal(&v.status);
        if seen.contains(&p) {
            return Err(format!("{}: two statuses become the type {p}", s.name));
        }
        seen.push(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_source;
    use std::path::Path;

    /// Units are appended once, `outcome` is renamed, a group's count follows its field.
    #[test]
    fn names_are_settled_once() {
        let text = "#!lua flags=no-writes\n--- summary: s\n--- invariant: i\n--- keys: a more...\n\
                    --- args: -\n--- returns: {'ok', ttl:ms, wait_ms:ms, outcome:'x'|'y', n, \
                    items:[id:str, at:us] * n}\n--- retry: safe\n--- version: 1\n\
                    return {'ok', 1, 1, 'x', 0}\n";
        let s = parse_source(Path::new("t.lua"), "t_x", text, &mut |_| Ok(None))
            .unwrap_or_else(|e| panic!("{e}"));
        let m = model(&[s], &Library::builtin(2));
        let s = &m.scripts[0];
        let names: Vec<&str> = s.variants[0]
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["ttl_ms", "wait_ms", "outcome_value", "n"]);
        let g = s.variants[0]
            .group
            .as_ref()
            .unwrap_or_else(|| panic!("group"));
        assert_eq!(
            (g.fields[1].name.as_str(), g.count.as_deref()),
            ("at_us", Some("n"))
        );
        assert!(s.read_only && s.retry_safe && s.keys[1].variadic);
        assert_eq!(s.function_name, "ra2_t_x");
    }

    #[test]
    fn spellings() {
        assert_eq!(camel("retry_after_ms"), "retryAfterMs");
        assert_eq!(pascal("in_progress"), "InProgress");
        assert_eq!(quoted("a\"b\\\né", false), "\"a\\\"b\\\\\\n\\u00e9\"");
    }
}

/// The one small script set every emitter's test reads.
#[cfg(test)]
pub(super) mod tests_support {
    use super::{model, SetModel};
    use crate::load::parse_source;
    use std::path::Path;

    pub(crate) fn sample() -> SetModel {
        let text =
            "#!lua\n--- summary: take from a cart\n--- invariant: i\n--- keys: cart more...\n\
                    --- args: qty\n--- returns: {'taken', wait:ms, outcome:'a'|'b', n, \
                    items:[id:str, at:us] * n} | {'gone'}\n--- retry: safe\n--- version: 1\n\
                    if ARGV[1] then return {'gone'} end\nredis.call('DEL', KEYS[1])\nreturn {'taken', 1, 'a', 0}\n";
        let s = parse_source(Path::new("t.lua"), "shop_take", text, &mut |_| Ok(None))
            .unwrap_or_else(|e| panic!("{e}"));
        model(&[s], &crate::folder::user_library("shop", 3))
    }
}
