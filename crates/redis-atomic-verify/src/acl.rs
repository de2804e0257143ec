//! The ACL a user needs to run verify against a server it does not own (`verify --acl` prints
//! it).
//!
//! The primitives need the library's least-privilege rules (`script::acl_rules`: the delivery
//! commands, every command the scripts call, the commands primitives send themselves). Verify
//! sends more of its own: the workloads' plain reads and writes (and their sabotaged twins), the
//! report's `INFO`, TTLs, and the clean-up's `SCAN`/`UNLINK` ([`crate::cleanup`]). Its keys are
//! all under `<namespace>-<run>-<check>` namespaces. The CLI's tests run verify (and its
//! sabotaged variant) as exactly this user, so a command added to a check without a line here
//! fails.

/// Commands verify sends itself, besides the primitives' (lower case, ACL syntax).
pub const OWN_COMMANDS: &[&str] = &[
    "info",    // the report's server version
    "time",    // the rate-limit check's clock offset
    "get",     // counters read by workloads and judgements
    "set",     // counters written by workloads
    "eval",    // sabotaged rate limiter (its script, patched)
    "incrby",  // sabotaged quota
    "pexpire", // TTLs (cleanup::Keeper)
    "hincrby", // the idempotency check's side effect
    "hgetall", // ... counted at the end
    "zrangebyscore",
    "zrem", // sabotaged queue claim
    "scan", // clean-up
    "unlink",
];

/// The key pattern of every key a run under `namespace` writes: `~<namespace>-*`.
pub fn key_pattern(namespace: &str) -> String {
    format!("~{namespace}-*")
}

/// The rules of a user that can run verify under `namespace` ([`crate::Verify::namespace`]) and
/// nothing else.
pub fn rules(namespace: &str) -> Vec<String> {
    let mut rules: Vec<String> = redis_atomic::script::acl_rules(namespace)
        .into_iter()
        .map(|r| {
            if r.starts_with('~') {
                key_pattern(namespace)
            } else {
                r
            }
        })
        .collect();
    for cmd in OWN_COMMANDS {
        let rule = format!("+{cmd}");
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

/// `ACL SETUSER <user> on >PASSWORD <rules>`: what `verify --acl` prints.
pub fn setuser_line(user: &str, namespace: &str) -> String {
    format!(
        "ACL SETUSER {user} on >PASSWORD {}",
        rules(namespace).join(" ")
    )
}

#[cfg(test)]
mod tests {
    /// One key pattern (verify's), the library's delivery commands and verify's own.
    #[test]
    fn rules_cover_verify() {
        let rules = super::rules("verify");
        let patterns: Vec<&String> = rules.iter().filter(|r| r.starts_with('~')).collect();
        assert_eq!(patterns, ["~verify-*"]);
        for cmd in ["+evalsha", "+info", "+hincrby", "+scan", "+unlink"] {
            assert_eq!(rules.iter().filter(|r| *r == cmd).count(), 1, "{cmd}");
        }
        let line = super::setuser_line("u", "ci");
        assert!(line.starts_with("ACL SETUSER u on >PASSWORD "), "{line}");
        assert!(line.split(' ').any(|w| w == "~ci-*"), "{line}");
    }
}
