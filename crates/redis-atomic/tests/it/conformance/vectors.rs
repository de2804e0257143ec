//! Reading the vectors file and comparing the library's answers with it: what every section's
//! runner shares.

use redis_atomic::Error;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// Fields every case has that are no expectation.
const DESCRIPTIVE: &[&str] = &["id", "why"];

/// The file: `REDIS_ATOMIC_VECTORS`, or the repository's `conformance/vectors.json`.
fn path() -> PathBuf {
    match std::env::var_os("REDIS_ATOMIC_VECTORS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/vectors.json"),
    }
}

/// The cases of `section`, which must be there and not be empty.
pub fn cases(section: &str) -> Vec<Value> {
    let path = path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let cases = file[section]
        .as_array()
        .unwrap_or_else(|| panic!("{} has no section {section:?}", path.display()))
        .clone();
    assert!(!cases.is_empty(), "section {section:?} is empty");
    cases
}

/// The case's id.
pub fn id(case: &Value) -> &str {
    case["id"].as_str().expect("every case has a string id")
}

/// A string field of a case's input (or of any object).
pub fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field:?} must be a string in {value}"))
}

/// An unsigned field of a case's input.
pub fn uint(value: &Value, field: &str) -> u64 {
    value[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field:?} must be a non-negative integer in {value}"))
}

/// A signed field of a case's input.
pub fn int(value: &Value, field: &str) -> i64 {
    value[field]
        .as_i64()
        .unwrap_or_else(|| panic!("{field:?} must be an integer in {value}"))
}

/// A byte string: a JSON string is its UTF-8 bytes, `{"hex": "..."}` any bytes.
pub fn bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(s) => s.as_bytes().to_vec(),
        Value::Object(o) if o.len() == 1 && o.contains_key("hex") => {
            hex::decode(o["hex"].as_str().expect("hex is a string")).expect("valid hex")
        }
        other => panic!("not a byte string: {other}"),
    }
}

/// The JSON of a byte string: a string when it is UTF-8, else `{"hex": "..."}`.
pub fn bytes_json(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => Value::String(s.to_string()),
        Err(_) => json!({ "hex": hex::encode(b) }),
    }
}

/// The outcome of an operation that failed: its error code.
pub fn error_json(e: &Error) -> Value {
    json!({ "error": e.code() })
}

/// What a case expects: the case without its descriptive fields and the `inputs` its section
/// reads.
pub fn expected(case: &Value, inputs: &[&str]) -> Value {
    let mut out = Map::new();
    for (k, v) in case.as_object().expect("a case is an object") {
        if !DESCRIPTIVE.contains(&k.as_str()) && !inputs.contains(&k.as_str()) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

/// The disagreements of one section, reported together at the end.
pub struct Check {
    section: &'static str,
    checked: usize,
    failures: Vec<String>,
}

impl Check {
    pub fn new(section: &'static str) -> Check {
        Check {
            section,
            checked: 0,
            failures: Vec::new(),
        }
    }

    /// Records whether `actual` (the library's answer) is what `case` expects.
    pub fn compare(&mut self, case: &Value, expected: &Value, actual: &Value) {
        self.compare_as(id(case), expected, actual);
    }

    /// [`Check::compare`] for a case run in several ways, named by `label`.
    pub fn compare_as(&mut self, label: &str, expected: &Value, actual: &Value) {
        self.checked += 1;
        if expected != actual {
            self.failures.push(format!(
                "{label}: the file expects\n    {expected}\n  the library answers\n    {actual}"
            ));
        }
    }

    /// Records a failure that is not a comparison (a missing case, an unusable input).
    pub fn fail(&mut self, what: String) {
        self.failures.push(what);
    }

    /// Fails the test, listing every disagreement, if there was one; and if nothing was checked.
    pub fn finish(self) {
        assert!(self.checked > 0, "{}: no case was checked", self.section);
        assert!(
            self.failures.is_empty(),
            "conformance/vectors.json, section {}: {} of {} case(s) disagree with the library\n{}",
            self.section,
            self.failures.len(),
            self.checked,
            self.failures.join("\n")
        );
    }
}
