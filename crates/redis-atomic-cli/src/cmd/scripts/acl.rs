//! `scripts acl`: the least-privilege ACL rules for a runtime user of one namespace, derived
//! from the scripts (ACL applies to the commands scripts call).
//!
//! The namespace becomes the key pattern `~<namespace>:*`, so it is validated first: a glob
//! character in it (`*?[]\`) would silently widen the pattern to other tenants' keys (`~a*:*`
//! matches `ab:...`), and whitespace would split the printed rule into several.

use anyhow::bail;
use std::io::Write;

/// Characters that mean something in an ACL key pattern.
const GLOB: &[char] = &['*', '?', '[', ']', '\\'];

/// Refuses a namespace that is empty or would not be matched literally by `~<namespace>:*`.
pub(super) fn check_namespace(namespace: &str) -> anyhow::Result<()> {
    if namespace.is_empty() {
        bail!("--namespace must not be empty");
    }
    if let Some(c) = namespace
        .chars()
        .find(|c| GLOB.contains(c) || c.is_whitespace() || c.is_control())
    {
        bail!(
            "--namespace {namespace:?}: {c:?} is not allowed (glob characters *?[]\\ and \
             whitespace would widen or split the key pattern ~{namespace}:*)"
        );
    }
    Ok(())
}

/// `scripts acl --namespace NS --user U`.
pub(super) fn acl(namespace: &str, user: &str, out: &mut dyn Write) -> anyhow::Result<i32> {
    check_namespace(namespace)?;
    if user.is_empty() || user.chars().any(|c| c.is_whitespace() || c.is_control()) {
        bail!("--user {user:?}: a user name is one non-empty word");
    }
    let rules = redis_atomic::script::acl_rules(namespace).join(" ");
    writeln!(out, "ACL SETUSER {user} on >PASSWORD {rules}")?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plain namespaces pass; glob characters, whitespace and the empty string are refused.
    #[test]
    fn namespaces() {
        for ok in ["app", "billing-eu", "a:b", "t_1.x"] {
            assert!(check_namespace(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a*", "a?", "a[b]", "a\\b", "a b", "a\tb", "a\n"] {
            assert!(check_namespace(bad).is_err(), "{bad:?}");
        }
    }
}
