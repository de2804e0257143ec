//! The reply type of one script: an exhaustive enum with a variant per status word, word enums
//! and group item structs, and the `FromReply` impl that reads the fields in header order.

use super::foreign::pascal;
use crate::load::ScriptFile;
use crate::returns::{Field, Group, Item, Shape, Type};
use std::fmt::Write as _;

/// `lock_acquire` → `LockAcquireReply`.
pub fn reply_name(script: &str) -> String {
    format!("{}Reply", pascal(script))
}

const KEYWORDS: &[&str] = &[
    "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
    "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
    "try", "type", "unsafe", "use", "where", "while", "yield",
];

fn ident(name: &str, script: &str) -> Result<String, String> {
    if KEYWORDS.contains(&name) {
        return Err(format!(
            "{script}: `{name}` is a Rust keyword: choose another field name"
        ));
    }
    Ok(name.to_string())
}

/// The Rust type of a field, and the cursor call that reads it.
fn rust_type(script: &str, f: &Field) -> (String, String) {
    let (ty, read) = match &f.ty {
        Type::Uint => ("u64".to_string(), "uint()".to_string()),
        Type::Int => ("i64".into(), "int()".into()),
        Type::Bool => ("bool".into(), "bool()".into()),
        Type::Ms => ("Duration".into(), "ms()".into()),
        Type::Us => ("Duration".into(), "us()".into()),
        Type::Fence => ("Fence".into(), "fence()".into()),
        Type::Bytes => ("Vec<u8>".into(), "bytes()".into()),
        Type::Str => ("String".into(), "str()".into()),
        Type::Text => ("String".into(), "text()".into()),
        Type::Word(words) => {
            let name = word_type(script, &f.name);
            let list: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
            let read = format!("word(&[{}]).map(|i| {name}::ALL[i])", list.join(", "));
            (name, read)
        }
    };
    if f.optional {
        (format!("Option<{ty}>"), format!("opt(|__r| __r.{read})"))
    } else {
        (ty, read)
    }
}

fn word_type(script: &str, field: &str) -> String {
    format!("{}{}", pascal(script), pascal(field))
}

fn group_type(script: &str, group: &str) -> String {
    format!("{}{}Item", pascal(script), pascal(group))
}

pub(super) fn reply_type(s: &ScriptFile) -> Result<String, String> {
    let name = reply_name(&s.name);
    let shapes = &s.header.shapes.shapes;
    let mut variants = Vec::new();
    for shape in shapes {
        let v = pascal(&shape.status);
        if variants.contains(&v) {
            return Err(format!("{}: two statuses become the variant {v}", s.name));
        }
        variants.push(v);
    }
    let mut out = format!(
        "/// The reply of [`{upper}`]: `{ret}`.\n#[derive(Clone, Debug, PartialEq, Eq)]\npub enum {name} {{\n",
        upper = s.name.to_uppercase(),
        ret = s.header.returns,
    );
    for (shape, variant) in shapes.iter().zip(&variants) {
        let _ = writeln!(out, "    /// `{}`", shape_text(shape));
        if shape.items.is_empty() {
            let _ = writeln!(out, "    {variant},");
            continue;
        }
        let _ = writeln!(out, "    {variant} {{");
        for item in &shape.items {
            let (field, ty) = item_decl(&s.name, item)?;
            let _ = writeln!(
                out,
                "        /// `{}`\n        {field}: {ty},",
                item_text(item)
            );
        }
        out.push_str("    },\n");
    }
    out.push_str("}\n\n");
    out.push_str(&helper_types(s)?);
    out.push_str(&from_reply_impl(s, &name, &variants)?);
    Ok(out)
}

fn item_decl(script: &str, item: &Item) -> Result<(String, String), String> {
    Ok(match item {
        Item::Field(f) => (ident(&f.name, script)?, rust_type(script, f).0),
        Item::Group(g) => (
            ident(&g.name, script)?,
            format!("Vec<{}>", group_type(script, &g.name)),
        ),
    })
}

/// Word enums and group item structs, each once per script.
fn helper_types(s: &ScriptFile) -> Result<String, String> {
    let mut out = String::new();
    let mut done: Vec<String> = Vec::new();
    let fields = s.header.shapes.shapes.iter().flat_map(|sh| &sh.items);
    for item in fields {
        let (type_name, code) = match item {
            Item::Field(f) => match &f.ty {
                Type::Word(words) => (word_type(&s.name, &f.name), word_enum(&s.name, f, words)?),
                _ => continue,
            },
            Item::Group(g) => {
                for f in &g.fields {
                    if let Type::Word(words) = &f.ty {
                        let t = word_type(&s.name, &f.name);
                        if !done.contains(&t) {
                            out.push_str(&word_enum(&s.name, f, words)?);
                            done.push(t);
                        }
                    }
                }
                (group_type(&s.name, &g.name), group_struct(&s.name, g)?)
            }
        };
        if done.contains(&type_name) {
            continue;
        }
        out.push_str(&code);
        done.push(type_name);
    }
    Ok(out)
}

fn word_enum(script: &str, f: &Field, words: &[String]) -> Result<String, String> {
    let name = word_type(script, &f.name);
    let variants: Vec<String> = words.iter().map(|w| pascal(w)).collect();
    let mut out = format!(
        "/// The words of `{field}` in [`{reply}`].\n#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum {name} {{\n",
        field = f.name,
        reply = reply_name(script),
    );
    for (w, v) in words.iter().zip(&variants) {
        let _ = writeln!(out, "    /// `'{w}'`\n    {v},");
    }
    let all: Vec<String> = variants.iter().map(|v| format!("{name}::{v}")).collect();
    let _ = writeln!(
        out,
        "}}\n\nimpl {name} {{\n    /// Every word, in header order.\n    pub const ALL: [{name}; {n}] = [{all}];\n}}\n",
        n = all.len(),
        all = all.join(", "),
    );
    Ok(out)
}

fn group_struct(script: &str, g: &Group) -> Result<String, String> {
    let name = group_type(script, &g.name);
    let mut out = format!(
        "/// One repetition of `{group}` in [`{reply}`].\n#[derive(Clone, Debug, PartialEq, Eq)]\npub struct {name} {{\n",
        group = g.name,
        reply = reply_name(script),
    );
    for f in &g.fields {
        let _ = writeln!(
            out,
            "    /// `{}`\n    pub {}: {},",
            field_text(f),
            ident(&f.name, script)?,
            rust_type(script, f).0
        );
    }
    out.push_str("}\n\n");
    Ok(out)
}

fn from_reply_impl(s: &ScriptFile, name: &str, variants: &[String]) -> Result<String, String> {
    let mut arms = String::new();
    let mut words = String::new();
    for (shape, variant) in s.header.shapes.shapes.iter().zip(variants) {
        let mut lets = String::new();
        let mut fields = Vec::new();
        for item in &shape.items {
            let field = match item {
                Item::Field(f) => {
                    let _ = writeln!(
                        lets,
                        "                let {} = __r.{}?;",
                        ident(&f.name, &s.name)?,
                        rust_type(&s.name, f).1
                    );
                    &f.name
                }
                Item::Group(g) => {
                    let _ = writeln!(lets, "{}", group_read(&s.name, g)?);
                    &g.name
                }
            };
            fields.push(field.as_str());
        }
        let construct = if fields.is_empty() {
            format!("{name}::{variant}")
        } else {
            format!("{name}::{variant} {{ {} }}", fields.join(", "))
        };
        let _ = writeln!(
            arms,
            "            {status:?} => {{\n{lets}                {construct}\n            }}",
            status = shape.status,
        );
        let pattern = if fields.is_empty() {
            format!("{name}::{variant}")
        } else {
            format!("{name}::{variant} {{ .. }}")
        };
        let _ = writeln!(words, "            {pattern} => {:?},", shape.status);
    }
    Ok(format!(
        "impl FromReply for {name} {{\n    \
         fn from_reply(mut __r: Reply) -> Result<Self, Error> {{\n        \
         let value = match __r.status() {{\n{arms}            _ => return Err(__r.unexpected()),\n        \
         }};\n        __r.finish()?;\n        Ok(value)\n    }}\n\n    \
         fn status(&self) -> &str {{\n        match self {{\n{words}        }}\n    }}\n}}\n\n",
    ))
}

fn group_read(script: &str, g: &Group) -> Result<String, String> {
    let ty = group_type(script, &g.name);
    let mut fields = Vec::new();
    for f in &g.fields {
        fields.push(format!(
            "{}: __r.{}?",
            ident(&f.name, script)?,
            rust_type(script, f).1
        ));
    }
    let count = match &g.count {
        Some(c) => format!("Some({c})"),
        None => "None".to_string(),
    };
    Ok(format!(
        "                let {name} = __r.group({n}, {count}, |__r| Ok({ty} {{ {fields} }}))?;",
        name = ident(&g.name, script)?,
        n = g.fields.len(),
        fields = fields.join(", "),
    ))
}

fn field_text(f: &Field) -> String {
    let ty = match &f.ty {
        Type::Uint => String::new(),
        Type::Word(words) => {
            let w: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            format!(":{}", w.join("|"))
        }
        other => format!(":{}", format!("{other:?}").to_ascii_lowercase()),
    };
    format!("{}{ty}{}", f.name, if f.optional { "?" } else { "" })
}

fn item_text(item: &Item) -> String {
    match item {
        Item::Field(f) => field_text(f),
        Item::Group(g) => {
            let fields: Vec<String> = g.fields.iter().map(field_text).collect();
            let count = g
                .count
                .as_ref()
                .map_or(String::new(), |c| format!(" * {c}"));
            format!("{}:[{}]{count}", g.name, fields.join(", "))
        }
    }
}

fn shape_text(shape: &Shape) -> String {
    let mut parts = vec![format!("'{}'", shape.status)];
    parts.extend(shape.items.iter().map(item_text));
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_source;
    use std::path::Path;

    fn script(returns: &str, body: &str) -> ScriptFile {
        let text = format!(
            "#!lua flags=no-writes\n--- summary: s\n--- invariant: i\n--- keys: -\n--- args: -\n\
             --- returns: {returns}\n--- retry: safe\n--- version: 1\n{body}\n"
        );
        parse_source(Path::new("t.lua"), "t_x", &text, &mut |_| Ok(None)).unwrap()
    }

    /// A field named like a Rust keyword, or statuses that collide as variants, are refused with
    /// a reason instead of generating code that does not compile.
    #[test]
    fn refuses_what_would_not_compile() {
        let keyword = script("{'ok', type}", "return {'ok', 1}");
        assert!(reply_type(&keyword).unwrap_err().contains("keyword"));
        let clash = script(
            "{'a_1'} | {'a1'}",
            "if x then return {'a_1'} end return {'a1'}",
        );
        assert!(reply_type(&clash).unwrap_err().contains("variant"));
    }

    /// Word lists and groups become their own types, read in header order.
    #[test]
    fn words_and_groups_get_types() {
        let s = script(
            "{'ok', state:'on'|'off', count, items:[id:str, n] * count} | {'none'}",
            "if x then return {'none'} end return {'ok', 'on'}",
        );
        let code = reply_type(&s).unwrap();
        assert!(code.contains("pub enum TXState"), "{code}");
        assert!(code.contains("pub struct TXItemsItem"), "{code}");
        assert!(code.contains("__r.group(2, Some(count)"), "{code}");
        assert!(code.contains("TXReply::None =>"), "{code}");
    }
}
