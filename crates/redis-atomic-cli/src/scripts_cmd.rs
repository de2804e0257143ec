//! `redis-atomic scripts list|show|acl`: what this build will run on the server, read from the
//! generated registry (so it can never disagree with the library). The status words each script
//! may reply with come from its `returns:` header line, read by the same parser `build.rs` uses
//! to generate the typed replies.

use crate::ScriptsCommand;
use redis_atomic::script::{registry, ScriptDef};
use redis_atomic_scripts::returns::{self, Item};
use std::io::Write;

pub(crate) fn run(command: ScriptsCommand, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = match command {
        ScriptsCommand::List { json: true } => list_json(out),
        ScriptsCommand::List { json: false } => list_table(out),
        ScriptsCommand::Show { name } => return show(&name, out, err),
        ScriptsCommand::Acl { namespace, user } => acl(&namespace, &user, out),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}

fn list_json(out: &mut dyn Write) -> std::io::Result<()> {
    let scripts = registry::ALL
        .iter()
        .map(|s| {
            Ok(serde_json::json!({
                "name": s.name, "version": s.version, "summary": s.summary,
                "invariant": s.invariant, "keys": s.keys, "args": s.args,
                "returns": s.returns, "statuses": statuses(s)?, "retry": s.retry.as_str(),
                "flags": s.flags, "sha1": s.sha1, "function": s.function_name(),
            }))
        })
        .collect::<std::io::Result<Vec<serde_json::Value>>>()?;
    let doc = serde_json::json!({
        "library": {"name": registry::LIBRARY_NAME, "sha1": registry::LIBRARY_SHA1},
        "scripts": scripts,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
}

/// Each reply shape of `def`: its status word and the names of the items after it (a repeated
/// group by its group name), in header order.
fn statuses(def: &ScriptDef) -> std::io::Result<Vec<serde_json::Value>> {
    let parsed = returns::parse(def.returns).map_err(|e| {
        std::io::Error::other(format!("{}: `returns:` does not parse: {e}", def.name))
    })?;
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

fn list_table(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<16} {:>3}  {:<22} {:<22} {:<6} {:<10} sha1",
        "name", "ver", "keys", "args", "retry", "flags"
    )?;
    for s in registry::ALL {
        let flags = if s.flags.is_empty() {
            "-".to_string()
        } else {
            s.flags.join(",")
        };
        writeln!(
            out,
            "{:<16} {:>3}  {:<22} {:<22} {:<6} {:<10} {}",
            s.name,
            s.version,
            s.keys.join(" "),
            s.args.join(" "),
            s.retry.as_str(),
            flags,
            s.sha1
        )?;
    }
    writeln!(
        out,
        "library {} sha1 {}",
        registry::LIBRARY_NAME,
        registry::LIBRARY_SHA1
    )
}

fn show(name: &str, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let source = if name == "library" {
        Some(registry::LIBRARY_SOURCE)
    } else {
        redis_atomic::script::find(name).map(|s| s.source)
    };
    match source {
        Some(src) => {
            let _ = out.write_all(src.as_bytes());
            0
        }
        None => {
            let names: Vec<&str> = registry::ALL.iter().map(|s| s.name).collect();
            let _ = writeln!(
                err,
                "error: no script `{name}`; known: {}, library",
                names.join(", ")
            );
            2
        }
    }
}

fn acl(namespace: &str, user: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let rules = redis_atomic::script::acl_rules(namespace).join(" ");
    writeln!(out, "ACL SETUSER {user} on >PASSWORD {rules}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scripts list --json` gives each script's status words and their field names, as its
    /// `returns:` line declares them.
    #[test]
    fn list_json_gives_status_words() {
        let mut out = Vec::new();
        list_json(&mut out).unwrap();
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
