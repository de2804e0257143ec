//! `redis-atomic scripts list|show|acl|check|lock|bindings`: the built-in scripts, read from the generated
//! registry (so they can never disagree with the library), and a user's own folder, read by the
//! same loader and checks `build.rs` uses (`redis-atomic-scripts`), so a user's scripts keep the
//! built-ins' rules.
//!
//! Exit codes: 0 ok / clean, 1 findings (`check`) or a refused lock (`lock`), 2 usage or
//! unreadable input.

mod acl;
mod bindings;
mod check;
mod checklist;
mod folder;
mod list;
mod lock;
mod report;

pub use bindings::BindingsArgs;
pub use check::CheckArgs;
pub(crate) use folder::library_name;
pub use folder::UserFolder;
pub use lock::LockArgs;

use crate::ScriptsCommand;
use std::io::Write;

/// Runs one `scripts` verb; returns the exit code.
pub(crate) fn run(command: ScriptsCommand, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = match command {
        ScriptsCommand::List { dir, library, json } => {
            list::list(dir.as_deref(), library.as_deref(), json, out)
        }
        ScriptsCommand::Show { name, dir, library } => {
            list::show(&name, dir.as_deref(), library.as_deref(), out)
        }
        ScriptsCommand::Acl { namespace, user } => acl::acl(&namespace, &user, out),
        ScriptsCommand::Check(args) => check::run(&args, out, err),
        ScriptsCommand::Lock(args) => lock::run(&args, out, err),
        ScriptsCommand::Bindings(args) => bindings::run(&args, out),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            2
        }
    }
}
