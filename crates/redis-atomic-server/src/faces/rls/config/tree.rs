//! The rules compiled into a tree per domain, and the reference server's lookup over it.
//!
//! Matching one descriptor, level by level (its `GetLimit`): the entry's `key_value` exactly,
//! else the first wildcard pattern of the level that matches `key_value` (`value: foo*`, or `*`
//! anywhere in the value, each `*` any run of characters), else the key alone (`value` left out
//! in the config: any value, each value its own counter). A limit applies only when it sits at
//! the descriptor's last entry; a level with no deeper descriptors ends the walk. An Envoy
//! `limit` override replaces the lookup for its descriptor (in a known domain).

use super::{RlsConfigError, YamlDescriptor, YamlRateLimit, YamlRoot, MAX_DEPTH};
use crate::faces::rls::pb::ratelimit::RateLimitDescriptor;
use redis_atomic::ratelimit::{Algorithm, Limit};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The rules of every domain.
#[derive(Debug, Default)]
pub struct Rules {
    domains: HashMap<String, Domain>,
}

/// One domain's rules and settings.
#[derive(Debug)]
pub struct Domain {
    /// The domain.
    pub name: String,
    /// The descriptor key whose value is the request's hash tag (extension).
    pub hash_tag: Option<String>,
    /// Which rate-limit headers the answers carry.
    pub headers: HeaderMode,
    root: Node,
}

/// Which headers go into `response_headers_to_add`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderMode {
    /// None.
    #[default]
    Off,
    /// IETF `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers).
    Ietf,
    /// `X-RateLimit-Limit`, `-Remaining`, `-Reset` (draft-03, as Envoy's own filter sends them).
    Draft03,
}

/// The time units of the reference server (a month is 30 days, a year 365).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unit {
    /// 1 s.
    Second,
    /// 60 s.
    Minute,
    /// 3600 s.
    Hour,
    /// 86400 s.
    Day,
    /// 7 days.
    Week,
    /// 30 days.
    Month,
    /// 365 days.
    Year,
}

impl Unit {
    /// The unit named `s` (any case), as the reference accepts it.
    pub fn parse(s: &str) -> Option<Unit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "second" => Unit::Second,
            "minute" => Unit::Minute,
            "hour" => Unit::Hour,
            "day" => Unit::Day,
            "week" => Unit::Week,
            "month" => Unit::Month,
            "year" => Unit::Year,
            _ => return None,
        })
    }

    /// The unit's proto number (`RateLimitResponse.RateLimit.Unit`; the same numbers in
    /// `envoy.type.v3.RateLimitUnit`, which has no week).
    pub fn proto(self) -> i32 {
        match self {
            Unit::Second => 1,
            Unit::Minute => 2,
            Unit::Hour => 3,
            Unit::Day => 4,
            Unit::Month => 5,
            Unit::Year => 6,
            Unit::Week => 7,
        }
    }

    /// The unit of proto number `n`.
    pub fn of_proto(n: i32) -> Option<Unit> {
        Some(match n {
            1 => Unit::Second,
            2 => Unit::Minute,
            3 => Unit::Hour,
            4 => Unit::Day,
            5 => Unit::Month,
            6 => Unit::Year,
            7 => Unit::Week,
            _ => return None,
        })
    }

    /// Its length.
    pub fn period(self) -> Duration {
        let day = 86_400;
        Duration::from_secs(match self {
            Unit::Second => 1,
            Unit::Minute => 60,
            Unit::Hour => 3600,
            Unit::Day => day,
            Unit::Week => 7 * day,
            Unit::Month => 30 * day,
            Unit::Year => 365 * day,
        })
    }

    /// Lower-case name (a key part and the default limit name).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Second => "second",
            Unit::Minute => "minute",
            Unit::Hour => "hour",
            Unit::Day => "day",
            Unit::Week => "week",
            Unit::Month => "month",
            Unit::Year => "year",
        }
    }
}

/// What a rule does to a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleLimit {
    /// `unlimited: true`: answered OK without Redis.
    Unlimited,
    /// `requests_per_unit: 0`: every request is over the limit (as on the reference).
    Block,
    /// A limit decided in Redis.
    Limit(Limit),
}

/// One `rate_limit`.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    /// The config path (`domain.key_value.key`): the metric's descriptor label.
    pub path: String,
    /// The limit.
    pub limit: RuleLimit,
    /// `requests_per_unit`.
    pub requests_per_unit: u32,
    /// The unit (None when unlimited).
    pub unit: Option<Unit>,
    /// `name` (for `replaces` and the answer's `current_limit.name`).
    pub name: Option<String>,
    /// The names this rule replaces.
    pub replaces: Vec<String>,
    /// `shadow_mode`.
    pub shadow: bool,
    /// `quota_mode`.
    pub quota: bool,
    /// `detailed_metric`: the request's values in the metric label.
    pub detailed_metric: bool,
}

#[derive(Debug, Default)]
struct Node {
    children: HashMap<String, Node>,
    /// The level's wildcard `key_value` patterns, split on `*`, in config order.
    wildcards: Vec<(String, Vec<String>)>,
    rule: Option<Arc<Rule>>,
    share_threshold: bool,
}

/// A descriptor's match: the rule and what names its counter.
#[derive(Clone, Debug)]
pub struct Matched {
    /// The rule.
    pub rule: Arc<Rule>,
    /// The counter's identity: the domain and the entries (`key=value`, the wildcard pattern for
    /// a `share_threshold` level), so equal descriptors share a counter.
    pub identity: String,
    /// The metric's descriptor label: the rule's path, or the request's values with
    /// `detailed_metric`.
    pub metric: String,
}

impl Rules {
    /// The domain named `name`.
    pub fn domain(&self, name: &str) -> Option<&Domain> {
        self.domains.get(name)
    }

    /// How many domains.
    pub fn len(&self) -> usize {
        self.domains.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    pub(super) fn add(&mut self, file: &str, root: YamlRoot) -> Result<(), RlsConfigError> {
        let err = |line: usize, field: &str, reason: String| RlsConfigError {
            file: file.to_string(),
            line: Some(line as u32),
            field: field.to_string(),
            reason,
        };
        let domain = root.domain.value;
        let line = root.domain.referenced.line() as usize;
        if domain.is_empty() {
            return Err(err(
                line,
                "domain",
                "config file cannot have empty domain".into(),
            ));
        }
        if self.domains.contains_key(&domain) {
            return Err(err(line, "domain", format!("duplicate domain '{domain}'")));
        }
        let headers = match root.response_headers {
            None => HeaderMode::Off,
            Some(h) => match h.value.as_str() {
                "off" => HeaderMode::Off,
                "ietf" => HeaderMode::Ietf,
                "draft-03" => HeaderMode::Draft03,
                other => {
                    let reason = format!("'{other}': expected off, ietf or draft-03");
                    return Err(err(
                        h.referenced.line() as usize,
                        "response_headers",
                        reason,
                    ));
                }
            },
        };
        let mut node = Node::default();
        let ctx = Ctx {
            file,
            domain: &domain,
        };
        node.load(
            &ctx,
            &format!("{domain}."),
            "descriptors",
            &root.descriptors,
            0,
        )?;
        let hash_tag = root.hash_tag.map(|h| h.value);
        self.domains.insert(
            domain.clone(),
            Domain {
                name: domain,
                hash_tag,
                headers,
                root: node,
            },
        );
        Ok(())
    }
}

struct Ctx<'a> {
    file: &'a str,
    domain: &'a str,
}

impl Ctx<'_> {
    fn err(&self, line: u32, field: String, reason: impl Into<String>) -> RlsConfigError {
        RlsConfigError {
            file: self.file.to_string(),
            line: Some(line),
            field,
            reason: reason.into(),
        }
    }
}

impl Node {
    fn load(
        &mut self,
        ctx: &Ctx<'_>,
        parent: &str,
        field: &str,
        descriptors: &[YamlDescriptor],
        depth: usize,
    ) -> Result<(), RlsConfigError> {
        for (i, d) in descriptors.iter().enumerate() {
            let field = format!("{field}[{i}]");
            let line = d.key.referenced.line() as u32;
            if depth >= MAX_DEPTH {
                return Err(ctx.err(line, field, format!("nested deeper than {MAX_DEPTH}")));
            }
            if d.key.value.is_empty() {
                return Err(ctx.err(line, format!("{field}.key"), "descriptor has empty key"));
            }
            let mut final_key = d.key.value.clone();
            if let Some(v) = d.value.as_deref().filter(|v| !v.is_empty()) {
                final_key = format!("{final_key}_{v}");
            }
            let path = format!("{parent}{final_key}");
            if self.children.contains_key(&final_key) {
                let reason = format!("duplicate descriptor composite key '{path}'");
                return Err(ctx.err(line, field, reason));
            }
            if d.share_threshold && !final_key.contains('*') {
                let reason = "share_threshold can only be used with wildcard values";
                return Err(ctx.err(line, format!("{field}.share_threshold"), reason));
            }
            let rule = match &d.rate_limit {
                None => None,
                Some(rl) => {
                    let at = rl.referenced.line() as u32;
                    let f = format!("{field}.rate_limit");
                    Some(Arc::new(rule(&rl.value, d, &path, ctx.domain).map_err(
                        |(sub, reason)| ctx.err(at, format!("{f}{sub}"), reason),
                    )?))
                }
            };
            if final_key.contains('*') {
                let parts = final_key.split('*').map(str::to_string).collect();
                self.wildcards.push((final_key.clone(), parts));
            }
            let mut child = Node {
                rule,
                share_threshold: d.share_threshold,
                ..Node::default()
            };
            let sub = format!("{field}.descriptors");
            child.load(ctx, &format!("{path}."), &sub, &d.descriptors, depth + 1)?;
            self.children.insert(final_key, child);
        }
        Ok(())
    }
}

/// One `rate_limit` block as a rule, or (the field under `rate_limit`, why).
fn rule(
    y: &YamlRateLimit,
    d: &YamlDescriptor,
    path: &str,
    _domain: &str,
) -> Result<Rule, (&'static str, String)> {
    let unit = match y.unit.as_deref() {
        Some(u) => Some(Unit::parse(u).ok_or((".unit", format!("invalid rate limit unit '{u}'")))?),
        None => None,
    };
    for r in &y.replaces {
        if r.name.is_empty() {
            return Err((
                ".replaces",
                "should not have an empty replaces entry".into(),
            ));
        }
        if Some(&r.name) == y.name.as_ref() {
            return Err((
                ".replaces",
                "replaces should not contain name of same descriptor".into(),
            ));
        }
    }
    let limit = if y.unlimited {
        if unit.is_some() {
            return Err((
                ".unit",
                "should not specify rate limit unit when unlimited".into(),
            ));
        }
        RuleLimit::Unlimited
    } else {
        let unit = unit.ok_or((".unit", "invalid rate limit unit ''".to_string()))?;
        let algorithm: Algorithm = match &y.algorithm {
            Some(a) => a
                .parse()
                .map_err(|e: redis_atomic::Error| (".algorithm", e.to_string()))?,
            None => Algorithm::FixedWindow,
        };
        if y.requests_per_unit == 0 {
            RuleLimit::Block
        } else {
            RuleLimit::Limit(library_limit(
                algorithm,
                y.requests_per_unit,
                unit,
                y.burst,
                y.name.as_deref(),
            )?)
        }
    };
    Ok(Rule {
        path: path.to_string(),
        limit,
        requests_per_unit: y.requests_per_unit,
        unit: if y.unlimited { None } else { unit },
        name: y.name.clone().filter(|n| !n.is_empty()),
        replaces: y.replaces.iter().map(|r| r.name.clone()).collect(),
        shadow: d.shadow_mode,
        quota: d.quota_mode,
        detailed_metric: d.detailed_metric,
    })
}

/// The library's limit for `n` per `unit`, named after the unit (its key part; a rename in
/// the config keeps the counter).
pub(crate) fn library_limit(
    algorithm: Algorithm,
    n: u32,
    unit: Unit,
    burst: Option<u64>,
    _name: Option<&str>,
) -> Result<Limit, (&'static str, String)> {
    let mut limit = Limit::new(algorithm, u64::from(n), unit.period())
        .map_err(|e| (".requests_per_unit", e.to_string()))?;
    if let Some(b) = burst {
        limit = limit.with_burst(b).map_err(|e| (".burst", e.to_string()))?;
    }
    limit.named(unit.name()).map_err(|e| ("", e.to_string()))
}

impl Domain {
    /// The rule one descriptor matches, if any (module docs). An Envoy `limit` override is
    /// handled by the caller.
    pub fn lookup(&self, d: &RateLimitDescriptor) -> Option<Matched> {
        let mut node = &self.root;
        let mut identity = self.name.clone();
        let mut metric = self.name.clone();
        let mut found: Option<Arc<Rule>> = None;
        for (i, e) in d.entries.iter().enumerate() {
            let kv = format!("{}_{}", e.key, e.value);
            let (next, value) = match node.children.get(&kv) {
                Some(n) => (n, e.value.as_str()),
                None => match node.wildcards.iter().find(|(_, p)| wildcard(p, &kv)) {
                    Some((pattern, _)) => {
                        let n = &node.children[pattern];
                        let shared = &pattern[e.key.len() + 1..];
                        (
                            n,
                            if n.share_threshold {
                                shared
                            } else {
                                e.value.as_str()
                            },
                        )
                    }
                    None => (node.children.get(&e.key)?, e.value.as_str()),
                },
            };
            identity.push_str(&format!("\u{1f}{}={value}", e.key));
            metric.push('.');
            metric.push_str(&kv);
            if let Some(rule) = &next.rule {
                if i == d.entries.len() - 1 {
                    found = Some(rule.clone());
                }
            }
            if next.children.is_empty() {
                break;
            }
            node = next;
        }
        let rule = found?;
        let metric = if rule.detailed_metric {
            metric
        } else {
            rule.path.clone()
        };
        Some(Matched {
            rule,
            identity,
            metric,
        })
    }
}

/// Whether `value` matches a pattern split on `*` (each `*` any run of characters).
fn wildcard(parts: &[String], value: &str) -> bool {
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return false;
    };
    if parts.len() == 1 {
        return first == value;
    }
    let fixed: usize = parts.iter().map(String::len).sum();
    if value.len() < fixed || !value.starts_with(first.as_str()) || !value.ends_with(last.as_str())
    {
        return false;
    }
    let mut rest = &value[first.len()..value.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p.as_str()) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    true
}
