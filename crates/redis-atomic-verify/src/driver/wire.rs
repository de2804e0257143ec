//! The driver protocol's messages (docs/verify.md, "Drivers"): what the harness sends, how an
//! answer is read, and which errors of the vocabulary table (`conformance/vocabulary.json`) mean
//! "nothing ran" and which "it may have run".

use serde_json::{json, Value};

/// The protocol version a hello carries.
pub(crate) const PROTOCOL: u64 = 1;

/// The hello of a row: where the server is (through the fault proxies), the row's namespace,
/// and the fault injected meanwhile (None: a clean row), so a driver can use the short timeout
/// the in-process rows use under faults.
pub(crate) fn hello(
    row: &str,
    urls: &[String],
    cluster: bool,
    namespace: &str,
    fault: Option<&str>,
) -> Value {
    json!({
        "op": "hello",
        "protocol": PROTOCOL,
        "row": row,
        "url": urls.first(),
        "urls": urls,
        "cluster": cluster,
        "namespace": namespace,
        "fault": fault,
    })
}

/// A request: run `op` (a vocabulary operation, `lock.acquire`) with `args`.
pub(crate) fn request(op: &str, args: Value) -> Value {
    json!({"op": op, "args": args})
}

/// How an error of the vocabulary table ends a call, as a history records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    /// Nothing ran (a refusal, a connection never made, a misuse caught before sending).
    NothingRan,
    /// It may have run: the reply was lost or unusable.
    Unknown,
}

/// The class of an error code, None for a word the vocabulary table lacks.
pub(crate) fn classify(code: &str) -> Option<ErrorClass> {
    use ErrorClass::{NothingRan, Unknown};
    Some(match code {
        "not_sent"
        | "rejected"
        | "connection"
        | "cross_slot"
        | "wrong_type"
        | "bad_argument"
        | "cost_exceeds_burst"
        | "client"
        | "handle_ended"
        | "used_after_fork"
        | "script_folder"
        | "idempotency_in_progress"
        | "idempotency_mismatch"
        | "idempotency_failed" => NothingRan,
        "outcome_unknown" | "bad_reply" | "server_error" | "tls" | "not_replicated"
        | "lease_lost" | "aborted" => Unknown,
        _ => return None,
    })
}

/// A driver's answer to a request.
#[derive(Debug)]
pub(crate) enum Answer {
    /// An outcome word (`acquired`, `held`, …) and the answer's other fields.
    Outcome(String, Value),
    /// An error of the vocabulary table.
    Error(String, ErrorClass),
}

impl Answer {
    /// Reads `{"outcome": word, ..}` or `{"error": code, ..}`; Err with why it is neither.
    pub(crate) fn read(answer: Value) -> Result<Answer, String> {
        if let Some(word) = answer.get("outcome").and_then(Value::as_str) {
            return Ok(Answer::Outcome(word.to_string(), answer));
        }
        match answer.get("error").and_then(Value::as_str) {
            Some(code) => match classify(code) {
                Some(class) => Ok(Answer::Error(code.to_string(), class)),
                None => Err(format!(
                    "error `{code}` is not a word of the vocabulary table"
                )),
            },
            None => Err(format!("neither `outcome` nor `error` in {answer}")),
        }
    }

    /// The outcome word, if it is one.
    pub(crate) fn word(&self) -> Option<&str> {
        match self {
            Answer::Outcome(w, _) => Some(w),
            Answer::Error(..) => None,
        }
    }

    /// A field of an outcome (`fence`, `handle`, `value`).
    pub(crate) fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Answer::Outcome(_, v) => v.get(name).filter(|f| !f.is_null()),
            Answer::Error(..) => None,
        }
    }

    /// As a history records a write: Some(applied) from an outcome, Some(false) when nothing ran,
    /// None when it may have run.
    pub(crate) fn applied(&self, yes: &str) -> Option<bool> {
        match self {
            Answer::Outcome(w, _) => Some(w == yes),
            Answer::Error(_, ErrorClass::NothingRan) => Some(false),
            Answer::Error(_, ErrorClass::Unknown) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error word of the vocabulary table has a class, so a driver of any face can answer
    /// with any of them (the table is the one source of the words).
    #[test]
    fn every_error_of_the_table_is_classified() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../conformance/vocabulary.json"
        );
        let table: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut seen = 0;
        for primitive in table["primitives"].as_array().unwrap() {
            for w in primitive["words"].as_array().unwrap() {
                if w["kind"] == "error" {
                    let word = w["word"].as_str().unwrap();
                    assert!(classify(word).is_some(), "{word} has no class");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 13, "only {seen} error words found");
        assert_eq!(classify("timeout"), None);
    }

    #[test]
    fn answers() {
        let a = Answer::read(json!({"outcome": "acquired", "fence": 7})).unwrap();
        assert_eq!(
            (a.word(), a.field("fence")),
            (Some("acquired"), Some(&json!(7)))
        );
        let e = Answer::read(json!({"error": "outcome_unknown"})).unwrap();
        assert_eq!(e.applied("applied"), None);
        let r = Answer::read(json!({"error": "rejected"})).unwrap();
        assert_eq!(r.applied("applied"), Some(false));
        assert!(Answer::read(json!({"error": "TimeoutError"})).is_err());
        assert!(Answer::read(json!({"ok": true})).is_err());
    }
}
