//! The lock's native rung: release by `DELIFEQ` / `DELEX … IFEQ`, extend by `SET … IFEQ … PX`,
//! where the server has them ([`crate::client::Capabilities`]); the scripts everywhere else.
//!
//! **Why these decide exactly what the scripts decide.** The lock key holds `"<fence>:<token>"`
//! and nothing else; a holder knows both halves (a [`super::LockGuard`], or a by-parts caller
//! with token and fence), so "the stored value equals `<fence>:<token>`" is one string comparison
//! the server can make natively. The scripts (`lock_release`, `lock_extend`) make the same
//! comparison, so both paths answer the same in every state: held by us → released / extended
//! (the fence is ours, the ttl the one we asked for); missing, expired, another owner, another
//! lease of our own token (another fence), a value that is not a lock → lost, nothing changed; a
//! key of another type → [`crate::Error::WrongType`] (`GET` in the script, the command itself
//! natively).
//! `SET … IFEQ` on a missing key creates nothing (checked on Valkey 9.1). The TTL is absolute:
//! `PX ttl` from the server's now, like the script's `PEXPIRE`; the value written is the value
//! compared, so it is unchanged. One difference is the server's, not the decision's: over
//! `maxmemory` a script that writes is refused (`OOM`), while `DELIFEQ` / `DELEX`, deletes, still
//! run (they free memory): a release at the memory limit succeeds natively.
//!
//! **Retry.** Compare-and-delete and compare-and-set-same-value are retry-safe in the scripts'
//! sense: a repeated release finds the key gone (or another owner's) and answers lost; a
//! repeated extend sets the same value and a fresh absolute lease, as a repeated `PEXPIRE` does.
//!
//! **Not native.** `acquire` (it issues a fence from a second key, which no single command
//! does) and `inspect` (two keys). The library's own give-back of an acquisition whose reply it
//! could not use ([`crate::Error::NotReplicated`]) knows no fence and runs `lock_release` for any
//! lease of its token.

use crate::client::native::{int_reply, set_reply, Native};
use crate::client::{Capabilities, NativeDelete};
use crate::lease::Fence;
use crate::script::registry::{LockExtendReply, LockReleaseReply};
use std::time::Duration;

/// The stored value of a lease: `"<fence>:<token>"` (the layout `lock_value.lua` reads).
pub(super) fn value(fence: Fence, token: &str) -> String {
    format!("{fence}:{token}")
}

/// `DELIFEQ lock value` or `DELEX lock IFEQ value`, if the server has one of them.
pub(super) fn release(
    caps: &Capabilities,
    lock: &str,
    fence: Fence,
    token: &str,
) -> Option<Native<LockReleaseReply>> {
    let mut cmd = match caps.release_command()? {
        NativeDelete::Delifeq => redis::cmd("DELIFEQ"),
        NativeDelete::DelexIfeq => redis::cmd("DELEX"),
    };
    cmd.arg(lock);
    if caps.release_command() == Some(NativeDelete::DelexIfeq) {
        cmd.arg("IFEQ");
    }
    cmd.arg(value(fence, token));
    let decode = move |v: redis::Value| match int_reply("lock_release", &v)? {
        0 => Ok(LockReleaseReply::Lost),
        _ => Ok(LockReleaseReply::Released { fence }),
    };
    Some(Native {
        cmd,
        decode: Box::new(decode),
    })
}

/// `SET lock value IFEQ value PX ttl_ms`, if the server's `SET` takes `IFEQ`.
pub(super) fn extend(
    caps: &Capabilities,
    lock: &str,
    fence: Fence,
    token: &str,
    ttl_ms: i64,
) -> Option<Native<LockExtendReply>> {
    if !caps.extend_native() {
        return None;
    }
    let value = value(fence, token);
    let mut cmd = redis::cmd("SET");
    cmd.arg(lock)
        .arg(&value)
        .arg("IFEQ")
        .arg(&value)
        .arg("PX")
        .arg(ttl_ms);
    let ttl = Duration::from_millis(u64::try_from(ttl_ms).unwrap_or(0));
    let decode = move |v: redis::Value| match set_reply("lock_extend", &v)? {
        true => Ok(LockExtendReply::Extended { fence, ttl }),
        false => Ok(LockExtendReply::Lost),
    };
    Some(Native {
        cmd,
        decode: Box::new(decode),
    })
}
