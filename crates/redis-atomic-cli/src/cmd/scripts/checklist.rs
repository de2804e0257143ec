//! The production checklist of a server-side script, per script: what `scripts check` can establish
//! from the source. Every finding lands on exactly one item, so the checklist says *what* is
//! missing and the finding says *where*.
//!
//! Items that need a running system (concurrent tests, metrics, a rollback plan) are not here:
//! `redis-atomic test` covers fixtures, `functions` the rollout; the guide lists the rest.

use serde::Serialize;

/// One checklist item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Item {
    /// The header parses: shebang and every `---` field.
    Header,
    /// The invariant is written in one sentence (`--- invariant:`).
    Invariant,
    /// The keys are listed, every key comes from KEYS, and the counts match the body.
    Keys,
    /// Safe or explicitly unsafe to retry after a timeout (`--- retry:`).
    Retry,
    /// The return contract is declared, matches the body and is versioned and locked.
    Contract,
    /// No unbounded loops, reads or keyspace walks.
    Loops,
    /// TTLs are part of the atomic section.
    Ttl,
    /// The shebang's flags match what the body does.
    Flags,
    /// Every other lint rule.
    Lint,
}

impl Item {
    /// Every item, in print order.
    pub const ALL: [Item; 9] = [
        Item::Header,
        Item::Invariant,
        Item::Keys,
        Item::Retry,
        Item::Contract,
        Item::Loops,
        Item::Ttl,
        Item::Flags,
        Item::Lint,
    ];

    /// How the item reads in the checklist.
    pub fn title(self) -> &'static str {
        match self {
            Item::Header => "header complete",
            Item::Invariant => "invariant stated",
            Item::Keys => "keys listed, from KEYS",
            Item::Retry => "retry class declared",
            Item::Contract => "contract versioned",
            Item::Loops => "bounded loops/reads",
            Item::Ttl => "TTLs on written keys",
            Item::Flags => "shebang flags",
            Item::Lint => "lint clean",
        }
    }

    /// Whether the item can only be judged from a parsed header.
    pub fn needs_header(self) -> bool {
        matches!(
            self,
            Item::Invariant | Item::Keys | Item::Retry | Item::Contract | Item::Flags
        )
    }

    /// The item a lint rule's finding belongs to.
    pub fn of_rule(rule: &str) -> Item {
        match rule {
            "header-invalid" => Item::Header,
            "key-not-from-keys" | "constant-hash-tag" | "header-body-mismatch" => Item::Keys,
            "unbounded-loop" | "unbounded-read" | "keys-command" | "scan-command" => Item::Loops,
            "write-without-ttl" | "expire-can-shorten" => Item::Ttl,
            "missing-shebang" | "bad-shebang" | "writes-under-no-writes" | "missing-no-writes" => {
                Item::Flags
            }
            _ => Item::Lint,
        }
    }

    /// The item a header/body disagreement (`check::check_body`) belongs to; `statuses` are the
    /// status-word problems among them.
    pub fn of_problem(problem: &str, statuses: &[String]) -> Item {
        if statuses.iter().any(|s| s == problem) {
            Item::Contract
        } else if problem.contains("no-writes") {
            Item::Flags
        } else {
            Item::Keys
        }
    }

    /// The header field a problem of this item is reported on.
    pub fn header_field(self, problem: &str) -> &'static str {
        match self {
            Item::Contract => "returns",
            Item::Keys if problem.contains("ARGV") => "args",
            Item::Keys => "keys",
            _ => "",
        }
    }
}

/// Lint rules `scripts check` leaves out because the build's own checks
/// (`redis_atomic_scripts::check`) judge the same thing and are reported instead: the header
/// parse and header/body agreement always, flags against writes when the build's check found a
/// problem with them (the build's verdict is the one that fails a build).
pub(super) fn judged_by_build(rule: &str, build_flagged_flags: bool) -> bool {
    matches!(rule, "header-invalid" | "header-body-mismatch")
        || (build_flagged_flags && matches!(rule, "writes-under-no-writes" | "missing-no-writes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The safety rules land on the items that name them; the rest on `lint`.
    #[test]
    fn rules_map_to_items() {
        assert_eq!(Item::of_rule("unbounded-loop"), Item::Loops);
        assert_eq!(Item::of_rule("key-not-from-keys"), Item::Keys);
        assert_eq!(Item::of_rule("write-without-ttl"), Item::Ttl);
        assert_eq!(Item::of_rule("float-return"), Item::Lint);
        let statuses = vec!["the body returns status `x`".to_string()];
        assert_eq!(Item::of_problem(&statuses[0], &statuses), Item::Contract);
        assert_eq!(
            Item::of_problem("flags say no-writes but the body calls SET", &statuses),
            Item::Flags
        );
    }
}
