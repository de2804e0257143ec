//! Generates the script registry from `scripts/*.lua`.
//!
//! The `.lua` files are the single source of truth: their headers give names, key and argument
//! names, retry class, flags and version. This script parses them with the same parser the
//! library and CLI use (`src/script/header.rs`), refuses to build when a header disagrees with its
//! body, expands `--@include` fragments, computes each SHA1 over the exact bytes Redis will run,
//! and composes the Redis Function library from the same sources. Nothing here is a hand-kept table.

#[path = "src/script/header.rs"]
#[allow(dead_code)]
mod header;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::{env, fs};

struct Entry {
    name: String,
    header: header::Header,
    source: String,
    body: String,
}

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let scripts = dir.join("scripts");
    println!("cargo:rerun-if-changed={}", scripts.display());
    let entries = load(&scripts);
    let version: u32 = read(&scripts.join("library.version"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("scripts/library.version must hold a positive integer: {e}"));
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("registry.rs");
    fs::write(&out, generate(&entries, version)).unwrap_or_else(|e| panic!("write {out:?}: {e}"));
}

fn read(path: &Path) -> String {
    println!("cargo:rerun-if-changed={}", path.display());
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn load(scripts: &Path) -> Vec<Entry> {
    let mut paths: Vec<PathBuf> = fs::read_dir(scripts)
        .unwrap_or_else(|e| panic!("read_dir {}: {e}", scripts.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "lua"))
        .collect();
    paths.sort();
    let includes = scripts.join("include");
    paths.iter().map(|p| load_one(p, &includes)).collect()
}

fn load_one(path: &Path, includes: &Path) -> Entry {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("utf-8 file name")
        .to_string();
    assert!(
        name.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "script file names are <primitive>_<op>.lua in lower snake case: {name}"
    );
    let raw = read(path);
    assert!(
        !raw.contains('\r'),
        "{name}.lua has CR bytes: scripts are LF-only (SHA1 is byte-exact)"
    );
    let header = header::parse(&raw).unwrap_or_else(|e| panic!("scripts/{name}.lua: header {e}"));
    let resolve = |inc: &str| -> Option<String> {
        let p = includes.join(format!("{inc}.lua"));
        p.exists().then(|| read(&p))
    };
    let source = header::expand_includes(&raw, &resolve)
        .unwrap_or_else(|e| panic!("scripts/{name}.lua: {e}"));
    let body = source
        .split_once('\n')
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    let problems = header::check_body(&header, header::body(&source));
    assert!(
        problems.is_empty(),
        "scripts/{name}.lua: header and body disagree: {problems:?}"
    );
    Entry {
        name,
        header,
        source,
        body,
    }
}

fn generate(entries: &[Entry], version: u32) -> String {
    let mut code = String::new();
    for e in entries {
        let h = &e.header;
        // Variadic scripts (a trailing `name...` key or argument) get a `DynScript`, whose counts
        // are checked when called; the rest a `Script<K, A>` checked by the compiler.
        let ty = if h.variadic_keys() || h.variadic_args() {
            "DynScript".to_string()
        } else {
            format!("Script<{}, {}>", h.keys.len(), h.args.len())
        };
        let ctor = if ty == "DynScript" {
            "DynScript"
        } else {
            "Script"
        };
        let _ = writeln!(
            code,
            "/// `{name}` (v{version}): {summary}\n///\n/// Invariant: {inv}\n///\n/// Returns: {ret}\n\
             pub static {upper}: {ty} = {ctor}::new(ScriptDef {{\n    \
             name: {name:?},\n    version: {version},\n    summary: {summary:?},\n    \
             invariant: {inv:?},\n    keys: &{keys:?},\n    args: &{args:?},\n    \
             returns: {ret:?},\n    retry: RetryClass::{retry:?},\n    flags: &{flags:?},\n    \
             sha1: {sha:?},\n    source: {source:?},\n    body: {body:?},\n}});\n",
            name = e.name,
            version = h.version,
            summary = h.summary,
            inv = h.invariant,
            ret = h.returns,
            upper = e.name.to_uppercase(),
            keys = h.keys,
            args = h.args,
            retry = h.retry,
            flags = h.flags,
            sha = sha1_smol::Sha1::from(&e.source).digest().to_string(),
            source = e.source,
            body = e.body,
        );
    }
    let all: Vec<String> = entries
        .iter()
        .map(|e| format!("&{}.def", e.name.to_uppercase()))
        .collect();
    let library = library_source(entries, version);
    let _ = writeln!(
        code,
        "/// Every script, sorted by name.\npub static ALL: &[&ScriptDef] = &[{}];\n\
         /// Version of the composed Function library (`scripts/library.version`).\n\
         pub const LIBRARY_VERSION: u32 = {version};\n\
         /// Name of the composed Function library.\npub const LIBRARY_NAME: &str = \"redis_atomic_v{version}\";\n\
         /// Source of the composed Function library, as `FUNCTION LOAD` takes it.\n\
         pub static LIBRARY_SOURCE: &str = {library:?};\n\
         /// SHA1 of [`LIBRARY_SOURCE`].\npub const LIBRARY_SHA1: &str = {sha:?};",
        all.join(", "),
        sha = sha1_smol::Sha1::from(&library).digest().to_string(),
    );
    code
}

/// One Function library from the same bodies: `ra<N>_<name>`, flags carried over, so two
/// application versions (libraries `redis_atomic_v<N>` and `v<N+1>`) coexist in a rolling deploy.
fn library_source(entries: &[Entry], version: u32) -> String {
    let mut lib = format!("#!lua name=redis_atomic_v{version}\n");
    for e in entries {
        let flags: Vec<String> = e.header.flags.iter().map(|f| format!("'{f}'")).collect();
        let _ = write!(
            lib,
            "\nredis.register_function{{function_name='ra{version}_{name}', flags={{{flags}}}, \
             callback=function(KEYS, ARGV)\n{body}end}}\n",
            name = e.name,
            flags = flags.join(", "),
            body = e.body,
        );
    }
    lib
}
