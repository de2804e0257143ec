//! `redis-atomic verify --driver` through the real binary: the flags reach the run (`--only`,
//! `--fault`), a broken foreign client exits 1 with its violation, a correct one 0 under faults,
//! and a fault that does not exist is a usage error. (What the rows judge is tested in the verify
//! crate, with the same stdlib-Python driver.)

use crate::{cli, stderr, stdout};

fn driver(broken: &str) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../redis-atomic-verify/tests/drivers/resp_driver.py"
    );
    format!("python3 {script} --broken={broken}")
}

fn rows(out: &std::process::Output) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
    doc["checks"].as_array().unwrap().clone()
}

/// A release without the owner check: the `lock` row finds two holders, the run exits 1.
#[test]
fn a_broken_driver_exits_1() {
    let d = driver("release");
    let o = cli(&[
        "verify",
        "--driver",
        &d,
        "--only",
        "lock",
        "--seconds",
        "1.5",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let rows = rows(&o);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "violations", "{}", rows[0]);
}

/// A correct driver passes `--only quota` clean and under the one `--fault` named.
#[test]
fn a_correct_driver_exits_0_under_the_named_fault() {
    let d = driver("");
    let args = [
        "--only",
        "quota",
        "--fault",
        "lost-reply",
        "--seconds",
        "1.5",
        "--json",
    ];
    let o = cli(&[&["verify", "--driver", &d][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let faults: Vec<_> = rows(&o).iter().map(|r| r["fault"].clone()).collect();
    assert_eq!(faults, ["none", "lost-reply"]);
}

/// An unknown fault is a usage error naming the flag, before anything starts.
#[test]
fn an_unknown_fault_is_a_usage_error() {
    let o = cli(&["verify", "--driver", "true", "--fault", "earthquake"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--fault"), "{}", stderr(&o));
}
