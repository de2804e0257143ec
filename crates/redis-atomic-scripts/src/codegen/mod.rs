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

mod reply;

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
    code.push_str(&decode_fn(scripts));
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

/// `decode_reply`: a raw reply decoded by the reply type of the script it names, so code that
/// has only a name (a test feeding every reply type arbitrary input, a fixture runner) reaches
/// every generated decoder, and a script added later is covered without a new line.
fn decode_fn(scripts: &[ScriptFile]) -> String {
    let mut arms = String::new();
    for s in scripts {
        let _ = writeln!(
            arms,
            "        {name:?} => {ty}::from_reply(reply).map(|r| FromReply::status(&r)),",
            name = s.name,
            ty = reply_name(&s.name),
        );
    }
    format!(
        "/// Decodes `reply` with the reply type of the script it was parsed for\n\
         /// ([`Reply::script`]): the status word of the typed value, or `None` when no script of\n\
         /// this registry has that name.\n\
         pub fn decode_reply(reply: Reply) -> Option<Result<&'static str, Error>> {{\n    \
         Some(match reply.script() {{\n{arms}        _ => return None,\n    }})\n}}\n\n"
    )
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
