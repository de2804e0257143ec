//! From a `RateLimitRequest` to the library's entries: what each descriptor is (matched,
//! unlimited, replaced, blocked, not limited) and which calls decide the matched ones.
//!
//! As the reference server does: each descriptor is looked up alone ([`Domain::lookup`], or an
//! Envoy `limit` override); `unlimited` ones are answered without Redis; a rule whose `name`
//! another matched rule `replaces` is not charged. Hits: the descriptor's `hits_addend` when set
//! (0 = check only), else the request's, else 1.
//!
//! **Calls.** With the domain's `hash_tag` set, every entry goes under one tag (the domain and
//! the value of the first entry with that key, or the domain alone when no descriptor has it):
//! one slot, one script call, all or nothing. Without it, on a standalone server or Sentinel the
//! tag is the domain (one call, all or nothing); on a cluster each descriptor is its own tag,
//! so its own slot and call: the calls run in request order and stop charging at the first
//! refusal (the descriptors before it stay charged; those after it are only checked, hits 0).

use super::config::{library_limit, Domain, Matched, Rule, RuleLimit, Unit};
use super::pb::ratelimit::{RateLimitDescriptor, RateLimitRequest};
use redis_atomic::ratelimit::{Algorithm, Entry, EntryMode, MAX_ENTRIES};
use std::collections::HashSet;
use std::sync::Arc;

/// What one descriptor is.
#[derive(Debug)]
pub enum Slot {
    /// No rule matches (or the domain is unknown): OK, no limit.
    None,
    /// `unlimited`: OK without Redis.
    Unlimited(Arc<Rule>),
    /// Replaced by another matched rule: not charged, OK.
    Replaced,
    /// Can never pass: `requests_per_unit: 0`, or more hits than the limit holds.
    Blocked(Matched),
    /// Decided in Redis: the call and the entry's index in it.
    Decided {
        /// The match.
        matched: Matched,
        /// The call ([`Plan::calls`]).
        call: usize,
        /// The entry in that call.
        entry: usize,
        /// The hits charged.
        hits: u64,
    },
}

/// One script call: its tag and entries.
#[derive(Debug, Default)]
pub struct Call {
    /// The hash tag.
    pub tag: String,
    /// The entries.
    pub entries: Vec<Entry>,
}

/// A request's plan.
#[derive(Debug, Default)]
pub struct Plan {
    /// Per descriptor, in order.
    pub slots: Vec<Slot>,
    /// The calls, in the order they run.
    pub calls: Vec<Call>,
}

/// Why a request is refused before anything is decided (gRPC `INVALID_ARGUMENT`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

/// The hits of descriptor `d` of `req`.
pub fn hits(req: &RateLimitRequest, d: &RateLimitDescriptor) -> u64 {
    d.hits_addend
        .unwrap_or_else(|| u64::from(req.hits_addend.max(1)))
}

/// Plans `req` against `domain` (None: unknown domain, nothing limited).
pub fn plan(
    req: &RateLimitRequest,
    domain: Option<&Domain>,
    cluster: bool,
) -> Result<Plan, BadRequest> {
    if req.domain.is_empty() {
        return Err(BadRequest("rate limit domain must not be empty".into()));
    }
    if req.descriptors.is_empty() {
        return Err(BadRequest(
            "rate limit descriptor list must not be empty".into(),
        ));
    }
    if req.descriptors.len() > MAX_ENTRIES {
        let n = req.descriptors.len();
        return Err(BadRequest(format!(
            "{n} descriptors: at most {MAX_ENTRIES}"
        )));
    }
    let Some(domain) = domain else {
        let slots = req.descriptors.iter().map(|_| Slot::None).collect();
        return Ok(Plan {
            slots,
            calls: Vec::new(),
        });
    };
    let matches: Vec<Option<Matched>> = req
        .descriptors
        .iter()
        .map(|d| matched(domain, d))
        .collect::<Result<_, _>>()?;
    let replaced: HashSet<String> = matches
        .iter()
        .flatten()
        .flat_map(|m| m.rule.replaces.iter().cloned())
        .collect();
    let shared_tag = tag_of(domain, req, cluster);
    let mut plan = Plan::default();
    for (d, m) in req.descriptors.iter().zip(matches) {
        let slot = match m {
            None => Slot::None,
            Some(m) if m.rule.name.as_deref().is_some_and(|n| replaced.contains(n)) => {
                Slot::Replaced
            }
            Some(m) => match &m.rule.limit {
                RuleLimit::Unlimited => Slot::Unlimited(m.rule.clone()),
                RuleLimit::Block => Slot::Blocked(m),
                RuleLimit::Limit(l) if hits(req, d) > l.burst() => Slot::Blocked(m),
                RuleLimit::Limit(l) => {
                    let hits = hits(req, d);
                    let mode = match (m.rule.shadow, m.rule.quota) {
                        (true, _) => EntryMode::Shadow,
                        (false, true) => EntryMode::Quota,
                        _ => EntryMode::Enforce,
                    };
                    let entry = Entry::new(l.clone(), m.identity.clone(), hits).with_mode(mode);
                    let tag = shared_tag.clone().unwrap_or_else(|| m.identity.clone());
                    let call = match plan.calls.iter().position(|c| c.tag == tag) {
                        Some(c) => c,
                        None => {
                            plan.calls.push(Call {
                                tag,
                                entries: Vec::new(),
                            });
                            plan.calls.len() - 1
                        }
                    };
                    plan.calls[call].entries.push(entry);
                    let entry = plan.calls[call].entries.len() - 1;
                    Slot::Decided {
                        matched: m,
                        call,
                        entry,
                        hits,
                    }
                }
            },
        };
        plan.slots.push(slot);
    }
    Ok(plan)
}

/// The shared tag of a request's calls, or None on a cluster without `hash_tag` (each
/// descriptor its own).
fn tag_of(domain: &Domain, req: &RateLimitRequest, cluster: bool) -> Option<String> {
    match &domain.hash_tag {
        Some(key) => {
            let value = req
                .descriptors
                .iter()
                .flat_map(|d| &d.entries)
                .find(|e| &e.key == key)
                .map(|e| e.value.as_str());
            Some(match value {
                Some(v) => format!("{}\u{1f}{v}", domain.name),
                None => domain.name.clone(),
            })
        }
        None if cluster => None,
        None => Some(domain.name.clone()),
    }
}

/// The descriptor's rule: Envoy's `limit` override (a fixed window of its own, as the reference
/// applies it: no shadow mode, no name), else the config's.
fn matched(domain: &Domain, d: &RateLimitDescriptor) -> Result<Option<Matched>, BadRequest> {
    if d.entries.is_empty() {
        return Err(BadRequest("a descriptor has no entries".into()));
    }
    let Some(o) = &d.limit else {
        return Ok(domain.lookup(d));
    };
    let unit = Unit::of_proto(o.unit)
        .ok_or_else(|| BadRequest(format!("limit override: unknown unit {}", o.unit)))?;
    let mut path = domain.name.clone();
    let mut identity = domain.name.clone();
    for e in &d.entries {
        path.push_str(&format!(".{}_{}", e.key, e.value));
        identity.push_str(&format!("\u{1f}{}={}", e.key, e.value));
    }
    let limit = if o.requests_per_unit == 0 {
        RuleLimit::Block
    } else {
        let l = library_limit(
            Algorithm::FixedWindow,
            o.requests_per_unit,
            unit,
            None,
            None,
        )
        .map_err(|(_, why)| BadRequest(format!("limit override: {why}")))?;
        RuleLimit::Limit(l)
    };
    let rule = Rule {
        path: path.clone(),
        limit,
        requests_per_unit: o.requests_per_unit,
        unit: Some(unit),
        name: None,
        replaces: Vec::new(),
        shadow: false,
        quota: false,
        detailed_metric: false,
    };
    Ok(Some(Matched {
        rule: Arc::new(rule),
        identity,
        metric: path,
    }))
}
