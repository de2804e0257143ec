//! Rust code generated from script headers: one typed `static` per script and one reply enum
//! per `returns:` line, plus the composed Function library.
//!
//! Nothing here is a hand-kept table. A binding calls `client.call(&LOCK_ACQUIRE, keys, args)`:
//! the compiler checks the key and argument counts against the header (`Script<K, A, R>`), and
//! the reply arrives as `LockAcquireReply`, decoded by code generated from the same header, so a
//! status word or field a binding does not handle is a compile error, not a runtime surprise.
//!
//! The generated code names its runtime by path (`crate` inside the library, `::redis_atomic`
//! for a user's own scripts) and uses: `script::{Script, DynScript, ScriptDef, RetryClass,
//! FromReply, Reply}`, `lease::Fence` and `Error`.

use crate::load::ScriptFile;
use crate::returns::{Field, Group, Item, Shape, Type};
use std::fmt::Write as _;

/// A Function library composed from scripts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// Library name, e.g. `redis_atomic_v6`.
    pub name: String,
    /// Library version (part of the name).
    pub version: u32,
    /// Prefix of every function name, e.g. `ra6_`: function `ra6_lock_acquire`.
    pub function_prefix: String,
}

impl Library {
    /// The built-in library of version `version`: `redis_atomic_v<N>`, functions `ra<N>_<name>`.
    pub fn builtin(version: u32) -> Library {
        Library {
            name: format!("redis_atomic_v{version}"),
            version,
            function_prefix: format!("ra{version}_"),
        }
    }

    /// The function name of `script` in this library.
    pub fn function_name(&self, script: &str) -> String {
        format!("{}{script}", self.function_prefix)
    }
}

/// One Function library from the scripts' bodies (shebang flags carried over), as `FUNCTION
/// LOAD` takes it.
pub fn library_source(scripts: &[ScriptFile], lib: &Library) -> String {
    let mut out = format!("#!lua name={}\n", lib.name);
    for s in scripts {
        let flags: Vec<String> = s.header.flags.iter().map(|f| format!("'{f}'")).collect();
        let _ = write!(
            out,
            "\nredis.register_function{{function_name='{function}', flags={{{flags}}}, \
             callback=function(KEYS, ARGV)\n{body}end}}\n",
            function = lib.function_name(&s.name),
            flags = flags.join(", "),
            body = s.function_body(),
        );
    }
    out
}

/// The registry: a `static` per script, its reply type, `ALL`, and the library's name, version,
/// source and SHA1. `runtime` is the path of the `redis-atomic` crate (`crate` or
/// `::redis_atomic`).
pub fn registry(scripts: &[ScriptFile], lib: &Library, runtime: &str) -> Result<String, String> {
    let mut code = format!(
        "#[allow(unused_imports)]\n\
         use {runtime}::script::{{DynScript, FromReply, Reply, RetryClass, Script, ScriptDef}};\n\
         #[allow(unused_imports)]\nuse {runtime}::Error;\n\
         #[allow(unused_imports)]\nuse {runtime}::lease::Fence;\n\
         #[allow(unused_imports)]\nuse ::std::time::Duration;\n\n"
    );
    for s in scripts {
        code.push_str(&script_static(s, lib)?);
        code.push_str(&reply_type(s)?);
    }
    let all: Vec<String> = scripts
        .iter()
        .map(|s| format!("&{}.def", s.name.to_uppercase()))
        .collect();
    let source = library_source(scripts, lib);
    let _ = writeln!(
        code,
        "/// Every script, sorted by name.\npub static ALL: &[&ScriptDef] = &[{all}];\n\
         /// Version of the composed Function library.\npub const LIBRARY_VERSION: u32 = {version};\n\
         /// Name of the composed Function library.\npub const LIBRARY_NAME: &str = {name:?};\n\
         /// Source of the composed Function library, as `FUNCTION LOAD` takes it.\n\
         pub static LIBRARY_SOURCE: &str = {source:?};\n\
         /// SHA1 of [`LIBRARY_SOURCE`].\npub const LIBRARY_SHA1: &str = {sha:?};",
        all = all.join(", "),
        version = lib.version,
        name = lib.name,
        sha = sha1_smol::Sha1::from(&source).digest().to_string(),
    );
    Ok(code)
}

fn script_static(s: &ScriptFile, lib: &Library) -> Result<String, String> {
    let h = &s.header;
    let reply = reply_name(&s.name);
    // Variadic scripts (a trailing `name...` key or argument) get a `DynScript`, whose counts
    // are checked when called; the rest a `Script<K, A, R>` checked by the compiler.
    let (ty, ctor) = if h.variadic_keys() || h.variadic_args() {
        (format!("DynScript<{reply}>"), "DynScript")
    } else {
        (
            format!("Script<{}, {}, {reply}>", h.keys.len(), h.args.len()),
            "Script",
        )
    };
    Ok(format!(
        "/// `{name}` (v{version}): {summary}\n///\n/// Invariant: {inv}\n///\n/// Returns: `{ret}`\n\
         pub static {upper}: {ty} = {ctor}::new(ScriptDef {{\n    \
         name: {name:?},\n    version: {version},\n    summary: {summary:?},\n    \
         invariant: {inv:?},\n    keys: &{keys:?},\n    args: &{args:?},\n    \
         returns: {ret:?},\n    retry: RetryClass::{retry},\n    flags: &{flags:?},\n    \
         sha1: {sha:?},\n    source: {source:?},\n    function: {function:?},\n    \
         function_body: {body:?},\n}});\n\n",
        name = s.name,
        version = h.version,
        summary = h.summary,
        inv = h.invariant,
        ret = h.returns,
        upper = s.name.to_uppercase(),
        keys = h.keys,
        args = h.args,
        retry = h.retry.variant(),
        flags = h.flags,
        sha = s.sha1,
        source = s.source(),
        function = lib.function_name(&s.name),
        body = s.function_body(),
    ))
}

/// `lock_acquire` → `LockAcquireReply`.
pub fn reply_name(script: &str) -> String {
    format!("{}Reply", camel(script))
}

/// `not_held` → `NotHeld`.
fn camel(name: &str) -> String {
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
    format!("{}{}", camel(script), camel(field))
}

fn group_type(script: &str, group: &str) -> String {
    format!("{}{}Item", camel(script), camel(group))
}

fn reply_type(s: &ScriptFile) -> Result<String, String> {
    let name = reply_name(&s.name);
    let shapes = &s.header.shapes.shapes;
    let mut variants = Vec::new();
    for shape in shapes {
        let v = camel(&shape.status);
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
    let variants: Vec<String> = words.iter().map(|w| camel(w)).collect();
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
         fn status(&self) -> &'static str {{\n        match self {{\n{words}        }}\n    }}\n}}\n\n",
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
