//! Section `spellings`: the inputs every face accepts (algorithm names in kebab and snake case,
//! deliveries and their command-name aliases) and refuses, parsed by the library once.

use super::vectors::{cases, error_json, expected, text, Check};
use redis_atomic::ratelimit::Algorithm;
use redis_atomic::Delivery;
use serde_json::json;

#[test]
fn spellings() {
    let mut check = Check::new("spellings");
    for case in cases("spellings") {
        let input = text(&case, "input");
        let actual = match text(&case, "kind") {
            "algorithm" => input
                .parse::<Algorithm>()
                .map(|a| json!({ "canonical": a.name(), "code": a.code() })),
            "delivery" => input
                .parse::<Delivery>()
                .map(|d| json!({ "canonical": d.name() })),
            other => panic!("unknown spelling kind {other:?}"),
        };
        let actual = actual.unwrap_or_else(|e| error_json(&e));
        check.compare(&case, &expected(&case, &["kind", "input"]), &actual);
    }
    check.finish();
}

/// Every algorithm and delivery has a case of its canonical spelling: a new one cannot be added
/// without its vectors.
#[test]
fn every_spelling_has_a_case() {
    let inputs: Vec<(String, String)> = cases("spellings")
        .iter()
        .map(|c| (text(c, "kind").to_string(), text(c, "input").to_string()))
        .collect();
    let has = |kind: &str, word: &str| inputs.iter().any(|(k, w)| k == kind && w == word);
    for a in Algorithm::ALL {
        assert!(has("algorithm", a.name()), "no case spells {a}");
    }
    for d in [Delivery::Eval, Delivery::Functions] {
        assert!(has("delivery", d.name()), "no case spells {}", d.name());
    }
}
