//! `scripts list` and `scripts show`: what will run on the server. The built-ins are read from
//! the generated registry (so they can never disagree with the library); a user's folder is
//! loaded by the loader `build.rs` uses. Both become the same [`Row`]s, so the table and the
//! JSON look alike. The status words each script may reply with come from its `returns:` line,
//! read by the same parser that generates the typed replies.

use super::folder::UserFolder;
use anyhow::{bail, Context as _};
use redis_atomic::script::{registry, ScriptDef};
use redis_atomic_scripts::returns::{self, Item};
use redis_atomic_scripts::ScriptFile;
use std::io::Write;
use std::path::Path;

/// What `list` shows of one script, wherever it comes from.
struct Row<'a> {
    name: &'a str,
    version: u32,
    summary: &'a str,
    invariant: &'a str,
    keys: Vec<&'a str>,
    args: Vec<&'a str>,
    returns: &'a str,
    retry: &'static str,
    flags: Vec<&'a str>,
    sha1: &'a str,
    function: String,
}

impl<'a> Row<'a> {
    fn builtin(s: &'a ScriptDef) -> Row<'a> {
        Row {
            name: s.name,
            version: s.version,
            summary: s.summary,
            invariant: s.invariant,
            keys: s.keys.to_vec(),
            args: s.args.to_vec(),
            returns: s.returns,
            retry: s.retry.as_str(),
            flags: s.flags.to_vec(),
            sha1: s.sha1,
            function: s.function_name().to_string(),
        }
    }

    fn user(s: &'a ScriptFile, folder: &UserFolder) -> Row<'a> {
        let h = &s.header;
        Row {
            name: &s.name,
            version: h.version,
            summary: &h.summary,
            invariant: &h.invariant,
            keys: h.keys.iter().map(String::as_str).collect(),
            args: h.args.iter().map(String::as_str).collect(),
            returns: &h.returns,
            retry: h.retry.as_str(),
            flags: h.flags.iter().map(String::as_str).collect(),
            sha1: &s.sha1,
            function: folder.library.function_name(&s.name),
        }
    }
}

/// The library line: name, version, SHA1 of its `FUNCTION LOAD` source.
struct LibraryRow {
    name: String,
    version: u32,
    sha1: String,
}

/// `scripts list [DIR]`.
pub(super) fn list(
    dir: Option<&Path>,
    library: Option<&str>,
    json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let folder = dir.map(|d| UserFolder::load(d, library)).transpose()?;
    let (rows, lib): (Vec<Row>, LibraryRow) = match &folder {
        Some(f) => (
            f.scripts.iter().map(|s| Row::user(s, f)).collect(),
            LibraryRow {
                name: f.library.name.clone(),
                version: f.library.version,
                sha1: redis_atomic_scripts::load::sha1_hex(&f.library_source()),
            },
        ),
        None => (
            registry::ALL.iter().map(|s| Row::builtin(s)).collect(),
            LibraryRow {
                name: registry::LIBRARY_NAME.to_string(),
                version: registry::LIBRARY_VERSION,
                sha1: registry::LIBRARY_SHA1.to_string(),
            },
        ),
    };
    if json {
        list_json(&rows, &lib, out)?;
    } else {
        list_table(&rows, &lib, out)?;
    }
    Ok(0)
}

fn list_json(rows: &[Row], lib: &LibraryRow, out: &mut dyn Write) -> anyhow::Result<()> {
    let scripts = rows
        .iter()
        .map(|s| {
            Ok(serde_json::json!({
                "name": s.name, "version": s.version, "summary": s.summary,
                "invariant": s.invariant, "keys": s.keys, "args": s.args,
                "returns": s.returns, "statuses": statuses(s.name, s.returns)?, "retry": s.retry,
                "flags": s.flags, "sha1": s.sha1, "function": s.function,
            }))
        })
        .collect::<anyhow::Result<Vec<serde_json::Value>>>()?;
    let doc = serde_json::json!({
        "library": {"name": lib.name, "version": lib.version, "sha1": lib.sha1},
        "scripts": scripts,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    Ok(())
}

/// Each reply shape of a `returns:` line: its status word and the names of the items after it
/// (a repeated group by its group name), in header order.
fn statuses(name: &str, returns: &str) -> anyhow::Result<Vec<serde_json::Value>> {
    let parsed = returns::parse(returns)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{name}: `returns:` does not parse"))?;
    Ok(parsed
        .shapes
        .iter()
        .map(|shape| {
            let fields: Vec<&str> = shape
                .items
                .iter()
                .map(|item| match item {
                    Item::Field(f) => f.name.as_str(),
                    Item::Group(g) => g.name.as_str(),
                })
                .collect();
            serde_json::json!({"status": shape.status, "fields": fields})
        })
        .collect())
}

fn list_table(rows: &[Row], lib: &LibraryRow, out: &mut dyn Write) -> anyhow::Result<()> {
    let width = |min: usize, f: &dyn Fn(&Row) -> usize| rows.iter().map(f).fold(min, usize::max);
    let name_w = width(16, &|r| r.name.len());
    let keys_w = width(22, &|r| r.keys.join(" ").len());
    let args_w = width(22, &|r| r.args.join(" ").len());
    writeln!(
        out,
        "{:<name_w$} {:>3}  {:<keys_w$} {:<args_w$} {:<6} {:<10} sha1",
        "name", "ver", "keys", "args", "retry", "flags"
    )?;
    for s in rows {
        let flags = if s.flags.is_empty() {
            "-".to_string()
        } else {
            s.flags.join(",")
        };
        writeln!(
            out,
            "{:<name_w$} {:>3}  {:<keys_w$} {:<args_w$} {:<6} {:<10} {}",
            s.name,
            s.version,
            s.keys.join(" "),
            s.args.join(" "),
            s.retry,
            flags,
            s.sha1
        )?;
    }
    writeln!(out, "library {} sha1 {}", lib.name, lib.sha1)?;
    Ok(())
}

/// `scripts show NAME [--dir DIR]`: the exact source, or the Function library for `library`.
pub(super) fn show(
    name: &str,
    dir: Option<&Path>,
    library: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<i32> {
    let (source, known) = match dir {
        Some(dir) => {
            let folder = UserFolder::load(dir, library)?;
            let source = match name {
                "library" => Some(folder.library_source()),
                _ => folder.find(name).map(|s| s.source().to_string()),
            };
            (source, folder.names())
        }
        None => {
            let source = match name {
                "library" => Some(registry::LIBRARY_SOURCE),
                _ => redis_atomic::script::find(name).map(|s| s.source),
            };
            let names: Vec<&str> = registry::ALL.iter().map(|s| s.name).collect();
            (source.map(str::to_string), names.join(", "))
        }
    };
    match source {
        Some(src) => {
            out.write_all(src.as_bytes())?;
            Ok(0)
        }
        None => bail!("no script `{name}`; known: {known}, library"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scripts list --json` gives each script's status words and their field names, as its
    /// `returns:` line declares them.
    #[test]
    fn list_json_gives_status_words() {
        let mut out = Vec::new();
        list(None, None, true, &mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let scripts = doc["scripts"].as_array().unwrap();
        assert_eq!(scripts.len(), registry::ALL.len());
        for (script, def) in scripts.iter().zip(registry::ALL) {
            let words: Vec<&str> = script["statuses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["status"].as_str().unwrap())
                .collect();
            let declared = returns::parse(def.returns).unwrap();
            assert_eq!(words, declared.statuses(), "{}", def.name);
            assert_eq!(script["returns"], def.returns);
        }
        let acquire = scripts
            .iter()
            .find(|s| s["name"] == "lock_acquire")
            .unwrap();
        let acquired = acquire["statuses"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["status"] == "acquired")
            .unwrap();
        assert_eq!(acquired["fields"], serde_json::json!(["fence", "ttl"]));
    }
}
