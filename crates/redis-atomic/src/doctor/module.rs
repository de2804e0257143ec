//! The `module` check: whether the node has the server module (`ratomic`) loaded, and which of
//! its natives this client uses — those whose version is its script's; the others run as scripts
//! (a module built from another release). Never a failure: without the module the scripts run.

use super::facts::NodeFacts;
use super::{DoctorOptions, Row, Status};

pub(super) fn module(n: &NodeFacts, opts: &DoctorOptions) -> Row {
    let Some(m) = &n.native.module else {
        return Row::new(
            "module",
            Status::Ok,
            "not loaded: the scripts run".into(),
            "",
        );
    };
    let used: Vec<&str> = m
        .natives
        .iter()
        .filter(|(name, _)| crate::script::find(name).is_some_and(|d| m.covers(d)))
        .map(|(name, _)| name.as_str())
        .collect();
    let mismatched = m.mismatched();
    let found = match opts.force_lua {
        true => format!("ratomic {} loaded, unused (Lua forced)", m.version),
        false => format!(
            "ratomic {} loaded, natives used: {}",
            m.version,
            used.join(", ")
        ),
    };
    if mismatched.is_empty() {
        return Row::new("module", Status::Ok, found, "");
    }
    Row::new(
        "module",
        Status::Warn,
        format!(
            "{found}; versions differ from this client's scripts (run as scripts): {}",
            mismatched.join(", ")
        ),
        "load the module built from this client's release (`redis-atomic module path`)",
    )
}
