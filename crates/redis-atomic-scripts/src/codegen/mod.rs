//! Rust code generated from script headers: one typed `static` per script and one reply enum
//! per `returns:` line, plus the composed Function library.
//!
//! Nothing here is a hand-kept table. A binding calls `client.call(&LOCK_ACQUIRE, keys, args)`:
//! the compiler checks the key and argument counts against the header (`Script<K, A, R>`), and
//! the reply arrives as `LockAcquireReply`, decoded by code generated from the same header, so a
//! status word or field a binding does not handle is a compile error, not a runtime surprise.
//!
//! The generated code names its runtime by path (`crate` inside the library, `::redis_atomic`
//! for a user's own scripts) and uses: `script::{Script, DynScript, ScriptDef, LibraryDef,
//! RetryClass, FromReply, Reply}`, `lease::Fence` and `Error`. Every script points at the
//! `LIBRARY` static of its own registry, so a client that finds a Function missing loads the
//! library the script belongs to: the built-in one or a user's.
//!
//! Library naming: the built-in library is `redis_atomic_v<N>` with functions `ra<N>_<script>`;
//! a user library `NAME` is `NAME_v<N>` with functions `NAME<N>_<script>`
//! ([`crate::folder::user_library`], names checked by [`crate::folder::check_library_name`]).
//!
//! Scripts with `--- batch: yes` also get batch entry points ([`batch`]): a `ScriptDef` per
//! group of flags in the registry's `batches` module (an `EVALSHA` script of its own), a function
//! `<prefix>_batch…` in the library, and a `batch` field on each batchable script's definition
//! pointing at its group's.

pub mod batch;
pub mod foreign;
pub mod go;
pub mod java;
mod reply;
pub mod ts;

pub use reply::reply_name;

use crate::load::ScriptFile;
use reply::reply_type;
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
/// LOAD` takes it. A batchable script's function is kept in a table (`__ra_F`) the batch entry
/// points appended at the end call too; a library without batchable scripts keeps the plain
/// form (and so its bytes).
pub fn library_source(scripts: &[ScriptFile], lib: &Library) -> String {
    let groups = batch::groups(scripts);
    let mut out = format!("#!lua name={}\n", lib.name);
    if !groups.is_empty() {
        out.push_str("\nlocal __ra_F = {}\n");
    }
    for s in scripts {
        let flags: Vec<String> = s.header.flags.iter().map(|f| format!("'{f}'")).collect();
        let (function, flags, body) = (
            lib.function_name(&s.name),
            flags.join(", "),
            s.function_body(),
        );
        if s.header.batch {
            let f = batch::library_function(s);
            let _ = write!(
                out,
                "\n{f} = function(KEYS, ARGV)\n{body}end\n\
                 redis.register_function{{function_name='{function}', flags={{{flags}}}, callback={f}}}\n",
            );
        } else {
            let _ = write!(
                out,
                "\nredis.register_function{{function_name='{function}', flags={{{flags}}}, \
                 callback=function(KEYS, ARGV)\n{body}end}}\n",
            );
        }
    }
    out.push_str(&batch::library_part(&groups, &lib.function_prefix));
    out
}

/// The registry: a `static` per script, its reply type, `ALL`, and the library's name, version,
/// source and SHA1. `runtime` is the path of the `redis-atomic` crate (`crate` or
/// `::redis_atomic`).
pub fn registry(scripts: &[ScriptFile], lib: &Library, runtime: &str) -> Result<String, String> {
    let mut code = format!(
        "#[allow(unused_imports)]\n\
         use {runtime}::script::{{DynScript, FromReply, LibraryDef, Reply, RetryClass, Script, ScriptDef}};\n\
         #[allow(unused_imports)]\nuse {runtime}::Error;\n\
         #[allow(unused_imports)]\nuse {runtime}::lease::Fence;\n\
         #[allow(unused_imports)]\nuse ::std::time::Duration;\n\n"
    );
    let groups = batch::groups(scripts);
    for s in scripts {
        code.push_str(&script_static(s, lib, &groups)?);
        code.push_str(&reply_type(s)?);
    }
    code.push_str(&batch_statics(&groups, lib));
    let all: Vec<String> = scripts
        .iter()
        .map(|s| format!("&{}.def", s.name.to_uppercase()))
        .collect();
    code.push_str(&decode_fn(scripts));
    let source = library_source(scripts, lib);
    let _ = writeln!(
        code,
        "/// Every script, sorted by name.\npub static ALL: &[&ScriptDef] = &[{all}];\n\
         /// Version of the composed Function library.\npub const LIBRARY_VERSION: u32 = {version};\n\
         /// Name of the composed Function library.\npub const LIBRARY_NAME: &str = {name:?};\n\
         /// Source of the composed Function library, as `FUNCTION LOAD` takes it.\n\
         pub static LIBRARY_SOURCE: &str = {source:?};\n\
         /// SHA1 of [`LIBRARY_SOURCE`].\npub const LIBRARY_SHA1: &str = {sha:?};\n\
         /// The composed Function library: what a client loads when one of these scripts' \
         Functions is missing.\npub static LIBRARY: LibraryDef = LibraryDef {{ name: LIBRARY_NAME, \
         version: LIBRARY_VERSION, source: LIBRARY_SOURCE, sha1: LIBRARY_SHA1 }};",
        all = all.join(", "),
        version = lib.version,
        name = lib.name,
        sha = sha1_smol::Sha1::from(&source).digest().to_string(),
    );
    Ok(code)
}

/// `decode_reply`: a raw reply decoded by the reply type of the script it names, so code that
/// has only a name (a test feeding every reply type arbitrary input, a fixture runner) reaches
/// every generated decoder, and a script added later is covered without a new line.
fn decode_fn(scripts: &[ScriptFile]) -> String {
    let mut arms = String::new();
    for s in scripts {
        let _ = writeln!(
            arms,
            "        {name:?} => {ty}::from_reply(reply).map(|r| FromReply::status(&r).to_string()),",
            name = s.name,
            ty = reply_name(&s.name),
        );
    }
    format!(
        "/// Decodes `reply` with the reply type of the script it was parsed for\n\
         /// ([`Reply::script`]): the status word of the typed value, or `None` when no script of\n\
         /// this registry has that name.\n\
         pub fn decode_reply(reply: Reply) -> Option<Result<String, Error>> {{\n    \
         Some(match reply.script() {{\n{arms}        _ => return None,\n    }})\n}}\n\n"
    )
}

/// The `batches` module: one `ScriptDef` per batch group, what a client sends when several
/// decisions of the group's scripts leave together (its `EVALSHA` source and library function).
fn batch_statics(groups: &[batch::BatchGroup<'_>], lib: &Library) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut code = String::from(
        "/// Batch entry points: each runs several decisions of its group's scripts in one call.\n\
         pub mod batches {\n    #[allow(unused_imports)]\n    use super::*;\n",
    );
    for g in groups {
        let source = batch::eval_source(g);
        let names: Vec<&str> = g.scripts.iter().map(|s| s.name.as_str()).collect();
        let _ = write!(
            code,
            "    /// `{name}`: batches of {list}.\n    pub static {upper}: ScriptDef = ScriptDef {{\n        \
             name: {name:?},\n        version: {version},\n        \
             summary: \"several decisions of batchable scripts, in order, in one call\",\n        \
             invariant: \"each decision gets the reply its own call would get at its place in the order\",\n        \
             keys: &[\"keys...\"],\n        args: &[\"runs...\"],\n        returns: \"\",\n        \
             statuses: &[],\n        retry: RetryClass::Unsafe,\n        flags: &{flags:?},\n        \
             sha1: {sha:?},\n        source: {source:?},\n        function: {function:?},\n        \
             function_body: \"\",\n        library: &LIBRARY,\n        batch: None,\n    }};\n",
            name = g.name,
            list = names.join(", "),
            upper = g.static_name(),
            version = lib.version,
            flags = g.flags,
            sha = sha1_smol::Sha1::from(&source).digest().to_string(),
            function = lib.function_name(&g.name),
        );
    }
    code.push_str("}\n\n");
    code
}

fn script_static(
    s: &ScriptFile,
    lib: &Library,
    groups: &[batch::BatchGroup<'_>],
) -> Result<String, String> {
    let h = &s.header;
    let batch = groups
        .iter()
        .find(|g| g.scripts.iter().any(|b| b.name == s.name))
        .map_or("None".to_string(), |g| {
            format!("Some(&batches::{})", g.static_name())
        });
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
         returns: {ret:?},\n    statuses: &{statuses:?},\n    retry: RetryClass::{retry},\n    flags: &{flags:?},\n    \
         sha1: {sha:?},\n    source: {source:?},\n    function: {function:?},\n    \
         function_body: {body:?},\n    library: &LIBRARY,\n    batch: {batch},\n}});\n\n",
        name = s.name,
        version = h.version,
        summary = h.summary,
        inv = h.invariant,
        ret = h.returns,
        statuses = h.shapes.statuses(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_source;
    use std::path::Path;

    fn script(name: &str, keys: &str, args: &str) -> ScriptFile {
        let text = format!(
            "#!lua\n--- summary: s\n--- invariant: i\n--- keys: {keys}\n--- args: {args}\n\
             --- returns: {{'ok', n}} | {{'gone'}}\n--- retry: unsafe\n--- version: 4\n\
             if ARGV[1] then return {{'gone'}} end\nredis.call('DEL', KEYS[1])\n\
             return {{'ok', 1}}\n"
        );
        parse_source(Path::new("t.lua"), name, &text, &mut |_| Ok(None))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A user library's registry: typed statics with the header's counts (a `DynScript` for a
    /// variadic list), functions named `NAME<N>_<script>`, every script pointing at the
    /// registry's own `LIBRARY`, and the runtime named by path.
    #[test]
    fn user_registry_shape() {
        let lib = crate::folder::user_library("shop", 3);
        let scripts = [
            script("cart_add", "cart", "item"),
            script("cart_drop", "cart more...", "item"),
        ];
        let code = registry(&scripts, &lib, "::redis_atomic").unwrap_or_else(|e| panic!("{e}"));
        for expected in [
            "use ::redis_atomic::script::{",
            "pub static CART_ADD: Script<1, 1, CartAddReply> = Script::new(ScriptDef {",
            "pub static CART_DROP: DynScript<CartDropReply> = DynScript::new(ScriptDef {",
            "function: \"shop3_cart_add\"",
            "statuses: &[\"ok\", \"gone\"]",
            "retry: RetryClass::Unsafe",
            "library: &LIBRARY,",
            "pub const LIBRARY_NAME: &str = \"shop_v3\";",
            "pub static LIBRARY: LibraryDef = LibraryDef {",
            "pub enum CartAddReply {",
        ] {
            assert!(code.contains(expected), "{expected} missing from:\n{code}");
        }
        assert_eq!(code.matches("library: &LIBRARY,").count(), 2);
        let source = library_source(&scripts, &lib);
        assert!(source.starts_with("#!lua name=shop_v3\n"), "{source}");
        assert!(
            source.contains("function_name='shop3_cart_drop'"),
            "{source}"
        );
    }

    /// The built-in library keeps its own scheme.
    #[test]
    fn builtin_names() {
        let lib = Library::builtin(6);
        assert_eq!(
            (lib.name.as_str(), lib.function_name("x").as_str()),
            ("redis_atomic_v6", "ra6_x")
        );
    }
}
