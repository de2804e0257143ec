//! The reference server's config, read as it is: every README example loads unchanged; lookups
//! follow its order (exact value, wildcard, key only; depth must match); mistakes are refused
//! naming file, line and field.

use super::{desc, fixtures};
use redis_atomic::ratelimit::Algorithm;
use redis_atomic_server::faces::rls::config::{HeaderMode, RuleLimit, Unit};
use redis_atomic_server::faces::rls::Rules;

/// Every example of the reference README loads from the folder, one domain per file.
#[test]
fn the_reference_examples_load_unchanged() {
    let rules = Rules::load(&fixtures()).unwrap();
    for d in [
        "mongo_cps",
        "messaging",
        "edge_proxy_per_ip",
        "example4",
        "internal",
        "example6",
        "example7",
        "example8",
        "example9",
        "example10",
        "example10_wildcard",
        "example11",
        "example11_metrics",
        "gateway",
    ] {
        assert!(rules.domain(d).is_some(), "{d}");
    }
    assert_eq!(rules.len(), 14);
    let gw = rules.domain("gateway").unwrap();
    assert_eq!(gw.headers, HeaderMode::Ietf);
    let m = gw.lookup(&desc(&[("tokens", "t1")])).unwrap();
    match &m.rule.limit {
        RuleLimit::Limit(l) => assert_eq!(l.algorithm(), Algorithm::TokenBucket),
        other => panic!("{other:?}"),
    }
}

/// The reference's matching order and depth rule, wildcards, unlimited and blocked rules.
#[test]
fn lookups_follow_the_reference() {
    let rules = Rules::load(&fixtures()).unwrap();
    let edge = rules.domain("edge_proxy_per_ip").unwrap();
    let any = edge
        .lookup(&desc(&[("remote_address", "50.0.0.1")]))
        .unwrap();
    assert_eq!(
        (any.rule.requests_per_unit, any.rule.unit),
        (10, Some(Unit::Second))
    );
    let black = edge
        .lookup(&desc(&[("remote_address", "50.0.0.5")]))
        .unwrap();
    assert_eq!(
        black.rule.limit,
        RuleLimit::Block,
        "exact value before key only"
    );
    assert_ne!(
        any.identity,
        edge.lookup(&desc(&[("remote_address", "50.0.0.2")]))
            .unwrap()
            .identity
    );

    let ex4 = rules.domain("example4").unwrap();
    assert!(ex4.lookup(&desc(&[("key", "value")])).is_some());
    assert!(
        ex4.lookup(&desc(&[("key", "value"), ("subkey", "subvalue")]))
            .is_none(),
        "a descriptor deeper than the rule does not match"
    );

    let msg = rules.domain("messaging").unwrap();
    let nested = msg
        .lookup(&desc(&[
            ("message_type", "marketing"),
            ("to_number", "2061111111"),
        ]))
        .unwrap();
    assert_eq!(
        (nested.rule.requests_per_unit, nested.rule.unit),
        (5, Some(Unit::Day))
    );
    assert!(
        msg.lookup(&desc(&[("message_type", "marketing")]))
            .is_none(),
        "placeholder level"
    );

    let internal = rules.domain("internal").unwrap();
    let ldap = internal.lookup(&desc(&[("ldap", "x")])).unwrap();
    assert_eq!(ldap.rule.limit, RuleLimit::Unlimited);

    let ex9 = rules.domain("example9").unwrap();
    assert!(ex9.lookup(&desc(&[("key1", "valueXYZ")])).is_some());
    assert!(ex9.lookup(&desc(&[("key1", "other")])).is_none());

    let ex11 = rules.domain("example11").unwrap();
    let (a, b) = (
        ex11.lookup(&desc(&[("files", "files/a.pdf")])).unwrap(),
        ex11.lookup(&desc(&[("files", "files/b.csv")])).unwrap(),
    );
    assert_eq!(
        a.identity, b.identity,
        "share_threshold: one counter for every match"
    );
    let (c, d) = (
        ex11.lookup(&desc(&[("files_no_share", "files_no_share/a.pdf")]))
            .unwrap(),
        ex11.lookup(&desc(&[("files_no_share", "files_no_share/b.csv")]))
            .unwrap(),
    );
    assert_ne!(c.identity, d.identity, "without it, one counter per value");

    let ex8 = rules.domain("example8").unwrap();
    let detailed = ex8.lookup(&desc(&[("key1", "unspecified_value")])).unwrap();
    assert_eq!(detailed.metric, "example8.key1_unspecified_value");
    let plain = rules
        .domain("mongo_cps")
        .unwrap()
        .lookup(&desc(&[("database", "users")]));
    assert_eq!(plain.unwrap().metric, "mongo_cps.database_users");
}

/// Mistakes: one line, `file:line: field: reason`, the line of the offending entry.
#[test]
fn mistakes_name_file_line_and_field() {
    let cases = [
        (
            "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n",
            "f.yaml:5: descriptors[0].rate_limit.unit: invalid rate limit unit 'fortnight'",
        ),
        (
            "domain: d\ndescriptors:\n  - key: k\n    descriptors:\n      - key: j\n        rate_limit:\n          unit: second\n          requests_per_unit: 5\n          algorithm: leaky\n",
            "f.yaml:7: descriptors[0].descriptors[0].rate_limit.algorithm: bad argument: unknown algorithm `leaky`",
        ),
        ("domain: d\ndescriptors:\n  - key: k\n    vaule: x\n", "f.yaml:4"),
        (
            "domain: d\ndescriptors:\n  - key: k\n    rate_limit:\n      unlimited: true\n      unit: second\n",
            "should not specify rate limit unit when unlimited",
        ),
        (
            "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 5, burst: 9}\n",
            "descriptors[0].rate_limit.burst: bad argument: fixed-window has no burst",
        ),
        (
            "domain: d\ndescriptors:\n  - key: k\n  - key: k\n",
            "f.yaml:4: descriptors[1]: duplicate descriptor composite key 'd.k'",
        ),
        ("domain: d\nresponse_headers: loud\n", "f.yaml:2: response_headers"),
        ("descriptors: []\n", "f.yaml"),
    ];
    for (text, expected) in cases {
        let err = Rules::parse([("f.yaml", text)])
            .expect_err(text)
            .to_string();
        assert!(
            err.contains(expected),
            "{text:?}\n→ {err}\n(expected {expected})"
        );
        assert!(!err.contains('\n'), "one line: {err}");
    }
    let two = Rules::parse([("a.yaml", "domain: d\n"), ("b.yaml", "domain: d\n")]);
    assert!(two
        .unwrap_err()
        .to_string()
        .starts_with("b.yaml:1: domain: duplicate domain"));
}
