//! Many identities' limits, each with its own hits, decided all or nothing in one script call:
//! what a gateway's request needs when it is limited per user, per route and globally at once
//! (Envoy's rate-limit descriptors, `redis-atomic rls`).
//!
//! **Invariant.** With every entry [`EntryMode::Enforce`], either every entry is charged its hits
//! or none is; no limit ever admits more than its algorithm permits; hits 0 charges nothing.
//!
//! **Keys.** One hash tag per call, chosen by the caller (a tenant, or the identity itself when
//! there is only one), so the whole decision is one slot and one `EVALSHA`:
//! `<ns>:rl:v1:{<t>}:<i>:<limit name>:<algorithm>` per entry (`<t>` and `<i>`: 128 bits of
//! SHA-256 of the tag and of the entry's identity, in hex), and with a request id
//! `<ns>:rl:v1:{<t>}:req:<p>:<r>` (`<p>`: the digest of the entries' keys, `<r>` of the id). These
//! keys are not [`RateLimiter`](super::RateLimiter)'s (`{<h>}:<limit name>:<algorithm>`): an
//! entry and a policy never share state.
//!
//! **Mechanism.** `rl_policy` in its entries form (six arguments per limit: the algorithm's four,
//! the hits and the mode): the same algorithm fragments as every other rate-limit script, one
//! loop that checks every limit before charging any. Entries naming the same key (identity,
//! limit name, algorithm) are merged first, their hits summed, so a request that lists one
//! descriptor twice is charged twice in one check, never checked twice against the same count.
//!
//! **Modes.** [`EntryMode::Shadow`] is decided and charged like the others when it admits but
//! never refuses the request (to observe a new limit first); [`EntryMode::Quota`] entries refuse
//! the request only when every one of them refuses. An entry that itself refuses is never
//! charged, whatever its mode (no limit goes over).
//!
//! **Hits 0** decides as a request of one unit would (an exhausted limit refuses) and charges
//! nothing: a check before work whose cost is known only afterwards.
//!
//! **Retry.** Without a request id a decision is `retry: unsafe` (after
//! [`Error::OutcomeUnknown`] it may or may not have been charged). With one
//! ([`EntryLimiter::decide_with_id`]) the admitted decision is recorded for the longest period of
//! the entries and a resend replays it, charging nothing.
//!
//! **Not guaranteed.** Refunds: no algorithm gives units back (Envoy's protocol carries none).
//! Across hash tags nothing is atomic: a caller deciding one request as several calls (one per
//! tag) gets all or nothing per call only. Replication and clocks: as [`super`].

use super::decision::Verdict;
use super::{scope_of, spec, Decision, Limit, MAX_KEY_LEN, MAX_REQUEST_ID_LEN, MAX_REQUEST_TTL};
use crate::client::{Arg, Client};
use crate::keys::{digest, Keyspace};
use crate::script::registry::RL_POLICY;
use crate::script::RetryClass;
use crate::Error;
use std::time::Duration;

/// Most entries in one decision (after merging entries with the same key).
pub const MAX_ENTRIES: usize = 32;

const SCHEMA: u32 = 1;

/// How an entry's own verdict weighs on the request's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryMode {
    /// Refusing refuses the request (the default).
    #[default]
    Enforce,
    /// Never refuses the request; charged when the request and the entry admit. Its status tells
    /// what it would have done.
    Shadow,
    /// The request is refused when every quota entry refuses (and no enforced entry does).
    Quota,
}

impl EntryMode {
    fn code(self) -> &'static str {
        match self {
            EntryMode::Enforce => "h",
            EntryMode::Shadow => "s",
            EntryMode::Quota => "q",
        }
    }

    /// Of two entries merged into one key, the mode that weighs more.
    fn stricter(self, other: EntryMode) -> EntryMode {
        use EntryMode::*;
        match (self, other) {
            (Enforce, _) | (_, Enforce) => Enforce,
            (Quota, _) | (_, Quota) => Quota,
            _ => Shadow,
        }
    }
}

/// One limit of one identity, charged `hits` units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    limit: Limit,
    identity: String,
    hits: u64,
    mode: EntryMode,
}

impl Entry {
    /// `hits` units (0: check only) of `limit` for `identity` (1..=1024 bytes, hashed into the
    /// key), enforced.
    pub fn new(limit: Limit, identity: impl Into<String>, hits: u64) -> Entry {
        Entry {
            limit,
            identity: identity.into(),
            hits,
            mode: EntryMode::Enforce,
        }
    }

    /// With this mode.
    pub fn with_mode(mut self, mode: EntryMode) -> Entry {
        self.mode = mode;
        self
    }

    /// The limit.
    pub fn limit(&self) -> &Limit {
        &self.limit
    }

    /// The identity.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The hits.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// The mode.
    pub fn mode(&self) -> EntryMode {
        self.mode
    }
}

/// One entry's state after a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EntryStatus {
    /// Whether this entry alone admits its hits (a shadow or quota entry may refuse while the
    /// request is admitted; an enforced one may admit while another refuses the request).
    pub admits: bool,
    /// Units this limit would still admit now (after the charge, when the request was admitted
    /// and charged it).
    pub remaining: u64,
    /// Until this limit is back to full capacity.
    pub reset_after: Duration,
    /// Until this limit alone would admit the entry (zero when it does).
    pub retry_after: Duration,
}

/// A decision over entries, with each entry's status in the caller's order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EntriesVerdict {
    /// The request's decision (remaining, reset and retry over the entries that can refuse).
    pub decision: Decision,
    /// Each entry's status (entries merged into one key report the same status).
    pub entries: Vec<EntryStatus>,
    /// Whether this is the recorded decision of an earlier call with the same request id.
    pub replayed: bool,
}

/// Decides [`Entry`] lists under one keyspace (module docs: [`entries`](self)).
#[derive(Clone, Debug)]
pub struct EntryLimiter {
    client: Client,
    keyspace: Keyspace,
}

/// The merged entries of one call: the distinct keys' entries and, per caller entry, its group.
struct Merged {
    entries: Vec<Entry>,
    group: Vec<usize>,
}

impl EntryLimiter {
    /// Entries decided under `keyspace`.
    pub fn new(client: Client, keyspace: Keyspace) -> EntryLimiter {
        EntryLimiter { client, keyspace }
    }

    /// The state keys of `entries` under `tag`, in order (merged entries share one).
    pub fn keys(&self, tag: &str, entries: &[Entry]) -> Result<Vec<String>, Error> {
        let t = digest(tag, MAX_KEY_LEN, "hash tag")?;
        entries.iter().map(|e| self.key(&t, e)).collect()
    }

    /// Decides `entries` under `tag`, all or nothing, in one call.
    pub async fn decide(&self, tag: &str, entries: &[Entry]) -> Result<EntriesVerdict, Error> {
        self.run(tag, entries, None).await
    }

    /// Like [`EntryLimiter::decide`], retry-safe: the same `request_id` with the same entries'
    /// keys replays the first admitted decision, charging nothing. Resent by itself after
    /// [`Error::OutcomeUnknown`].
    pub async fn decide_with_id(
        &self,
        tag: &str,
        entries: &[Entry],
        request_id: &str,
    ) -> Result<EntriesVerdict, Error> {
        self.run(tag, entries, Some(request_id)).await
    }

    fn key(&self, tag: &str, e: &Entry) -> Result<String, Error> {
        let i = digest(&e.identity, MAX_KEY_LEN, "identity")?;
        let parts = [i.as_str(), e.limit.name(), e.limit.algorithm().code()];
        self.keyspace.key("rl", SCHEMA, tag, &parts)
    }

    async fn run(
        &self,
        tag: &str,
        entries: &[Entry],
        request_id: Option<&str>,
    ) -> Result<EntriesVerdict, Error> {
        let t = digest(tag, MAX_KEY_LEN, "hash tag")?;
        let keys = entries
            .iter()
            .map(|e| self.key(&t, e))
            .collect::<Result<Vec<_>, _>>()?;
        let merged = merge(entries, &keys)?;
        let limit_keys: Vec<&str> = merged.group_keys(&keys);
        let request = request_id
            .map(|id| digest(id, MAX_REQUEST_ID_LEN, "request id"))
            .transpose()?;
        let first = match &request {
            Some(r) => {
                let scope = scope_of(limit_keys.iter().map(|k| k.to_string()));
                self.keyspace.key("rl", SCHEMA, &t, &["req", &scope, r])?
            }
            None => self.keyspace.key("rl", SCHEMA, &t, &["req", "-"])?,
        };
        let mut all_keys = Vec::with_capacity(limit_keys.len() + 1);
        all_keys.push(first.as_str());
        all_keys.extend(limit_keys.iter().copied());
        let ttl = merged
            .entries
            .iter()
            .map(|e| e.limit.period())
            .max()
            .unwrap_or_default()
            .min(MAX_REQUEST_TTL);
        let ttl_us = ttl.as_micros().to_string();
        let request = request.unwrap_or_default();
        let specs: Vec<[String; 6]> = merged.entries.iter().map(spec6).collect();
        let mut args = vec![
            Arg::from(""),
            request.as_str().into(),
            ttl_us.as_str().into(),
            "".into(),
        ];
        args.extend(specs.iter().flatten().map(Arg::from));
        let reply = if request.is_empty() {
            self.client.call(&RL_POLICY, &all_keys, &args).await?
        } else {
            let safe = RetryClass::Safe;
            self.client
                .call_as(&RL_POLICY, &all_keys, &args, safe)
                .await?
        };
        let verdict = Verdict::of_policy(reply, merged.entries.len())?;
        Ok(merged.verdict(verdict))
    }
}

/// Merges entries naming the same key (hits summed, the stricter mode); refuses a key named
/// with two different limits, too many entries, and hits above a limit's burst.
fn merge(entries: &[Entry], keys: &[String]) -> Result<Merged, Error> {
    if entries.is_empty() || entries.len() > MAX_ENTRIES {
        return Err(Error::BadArgument(format!(
            "a decision takes 1..={MAX_ENTRIES} entries, got {}",
            entries.len()
        )));
    }
    let mut out: Vec<Entry> = Vec::with_capacity(entries.len());
    let mut firsts: Vec<usize> = Vec::with_capacity(entries.len());
    let mut group = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        match firsts.iter().position(|&f| keys[f] == keys[i]) {
            Some(g) => {
                let m = &mut out[g];
                if m.limit != e.limit {
                    return Err(Error::BadArgument(format!(
                        "limit {:?} of one identity given twice with different settings",
                        e.limit.name()
                    )));
                }
                m.hits = m.hits.saturating_add(e.hits);
                m.mode = m.mode.stricter(e.mode);
                group.push(g);
            }
            None => {
                group.push(out.len());
                firsts.push(i);
                out.push(e.clone());
            }
        }
    }
    for e in &out {
        if e.hits > e.limit.burst() {
            return Err(Error::CostExceedsBurst {
                cost: e.hits,
                burst: e.limit.burst(),
            });
        }
    }
    Ok(Merged {
        entries: out,
        group,
    })
}

impl Merged {
    /// Each merged entry's key (the key of its first caller entry).
    fn group_keys<'k>(&self, keys: &'k [String]) -> Vec<&'k str> {
        let mut out = vec![""; self.entries.len()];
        for (i, &g) in self.group.iter().enumerate().rev() {
            out[g] = keys[i].as_str();
        }
        out
    }

    /// The script's verdict, per caller entry.
    fn verdict(&self, v: Verdict) -> EntriesVerdict {
        let statuses: Vec<EntryStatus> = v
            .limits
            .iter()
            .map(|s| EntryStatus {
                admits: s.retry_after.is_zero(),
                remaining: s.remaining,
                reset_after: s.reset_after,
                retry_after: s.retry_after,
            })
            .collect();
        EntriesVerdict {
            decision: v.decision,
            entries: self.group.iter().map(|&g| statuses[g]).collect(),
            replayed: v.replayed,
        }
    }
}

/// The entries form's six arguments of one limit.
fn spec6(e: &Entry) -> [String; 6] {
    let [algo, limit, period, burst] = spec(&e.limit);
    [
        algo,
        limit,
        period,
        burst,
        e.hits.to_string(),
        e.mode.code().to_string(),
    ]
}
