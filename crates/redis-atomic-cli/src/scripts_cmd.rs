//! `redis-atomic scripts list|show`: what this build will run on the server, read from the
//! generated registry (so it can never disagree with the library).

use crate::ScriptsCommand;
use redis_atomic::script::registry;
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
    let scripts: Vec<serde_json::Value> = registry::ALL
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name, "version": s.version, "summary": s.summary,
                "invariant": s.invariant, "keys": s.keys, "args": s.args,
                "returns": s.returns, "retry": s.retry.as_str(), "flags": s.flags,
                "sha1": s.sha1, "function": s.function_name(),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "library": {"name": registry::LIBRARY_NAME, "sha1": registry::LIBRARY_SHA1},
        "scripts": scripts,
    });
    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)
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
