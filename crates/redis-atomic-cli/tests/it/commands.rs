//! The binary's small verbs and its contract with every verb: `scripts list|show|acl`, `slot`;
//! a closed stdout pipe is a quiet end; every verb's help documents its exit codes.

use crate::{cli, stderr, stdout};

/// `scripts list --json` lists every script with its header facts.
#[test]
fn scripts_list_json() {
    let o = cli(&["scripts", "list", "--json"]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let scripts = doc["scripts"].as_array().unwrap();
    assert_eq!(scripts.len(), redis_atomic::script::registry::ALL.len());
    let acquire = scripts
        .iter()
        .find(|s| s["name"] == "lock_acquire")
        .unwrap();
    assert_eq!(acquire["keys"], serde_json::json!(["lock", "fence"]));
    assert_eq!(acquire["retry"], "safe");
    assert_eq!(
        acquire["sha1"],
        redis_atomic::script::registry::LOCK_ACQUIRE.sha1
    );
    let table = stdout(&cli(&["scripts", "list"]));
    assert!(table.contains("lock_inspect") && table.contains("no-writes"));
}

/// `scripts show` prints the exact source Redis runs; an unknown name is a usage error.
#[test]
fn scripts_show() {
    let o = cli(&["scripts", "show", "lock_release"]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        redis_atomic::script::registry::LOCK_RELEASE.source
    );
    let lib = cli(&["scripts", "show", "library"]);
    assert!(stdout(&lib).starts_with("#!lua name=redis_atomic_v"));
    let o = cli(&["scripts", "show", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lock_acquire"));
}

/// `module path` prints the module's path when `REDIS_ATOMIC_MODULE` names a file, exit 1
/// (nothing on stdout) when it does not.
#[test]
fn module_path_prints_the_module() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let so = dir.path().join("libredis_atomic_module.so");
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args(["module", "path"])
            .env("REDIS_ATOMIC_MODULE", &so)
            .output()
            .expect("run the CLI")
    };
    let missing = run();
    assert_eq!(missing.status.code(), Some(1));
    assert!(missing.stdout.is_empty());
    std::fs::write(&so, b"").expect("write");
    let found = run();
    assert!(found.status.success(), "{}", stderr(&found));
    assert_eq!(stdout(&found).trim(), so.display().to_string());
}

/// `slot` prints CLUSTER KEYSLOT values; `--check-same` exits 1 across slots.
#[test]
fn slot_check_same() {
    let o = cli(&["slot", "--check-same", "a:{x}:1", "b:{x}:2"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains(&redis_atomic::keys::slot(b"x").to_string()));
    assert_eq!(
        cli(&["slot", "--check-same", "{a}", "{b}"]).status.code(),
        Some(1)
    );
    assert_eq!(cli(&["slot", "foo"]).status.code(), Some(0));
    assert!(stdout(&cli(&["slot", "foo"])).contains("12182"));
}

/// `scripts acl` prints a SETUSER line with the key pattern and the commands scripts call.
#[test]
fn scripts_acl() {
    let o = cli(&["scripts", "acl", "--namespace", "billing"]);
    assert!(o.status.success());
    let line = stdout(&o);
    assert!(
        line.starts_with("ACL SETUSER app on >PASSWORD resetkeys ~billing:* "),
        "{line}"
    );
    for cmd in ["+evalsha", "+fcall", "+get", "+set", "+pexpire", "+time"] {
        assert!(
            line.split_whitespace().any(|w| w == cmd),
            "{cmd} missing: {line}"
        );
    }
}

/// `scripts acl --namespace 'a*'` once printed the widened pattern `~a*:*`, which grants the
/// keys of every namespace starting with `a`. A namespace with a glob character or whitespace is
/// now a one-line usage error (exit 2) and nothing is printed.
#[test]
fn scripts_acl_refuses_glob_namespaces() {
    for ns in ["a*", "a?", "a[bc]", "a\\b", "a b", ""] {
        let o = cli(&["scripts", "acl", "--namespace", ns]);
        assert_eq!(o.status.code(), Some(2), "{ns:?}");
        assert!(o.stdout.is_empty(), "{ns:?}: {}", stdout(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{ns:?}: {}", stderr(&o));
    }
}

/// `redis-atomic scripts list | head -1`: when stdout's reader has gone, the binary ends quietly
/// with exit 0, not `error: Broken pipe` and exit 2. The read end is closed before the binary
/// writes a byte, so every write fails: the case cannot pass by the output fitting in the pipe.
#[test]
fn a_closed_stdout_pipe_is_a_quiet_end() {
    let verbs: [&[&str]; 5] = [
        &["scripts", "list"],
        &["scripts", "show", "library"],
        &["scripts", "acl", "--namespace", "app"],
        &["lint", "--rules"],
        &["verify", "--acl"],
    ];
    for args in verbs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_redis-atomic"))
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(o.stderr.is_empty(), "{args:?}: {}", stderr(&o));
    }
}

/// Every verb's `--help` documents its exit codes.
#[test]
fn every_verb_documents_its_exit_codes() {
    let verbs = [
        "scripts",
        "slot",
        "module",
        "verify",
        "lint",
        "functions",
        "bench",
        "test",
        "doctor",
        "proxy",
        "serve",
    ];
    for verb in verbs {
        let o = cli(&[verb, "--help"]);
        assert!(o.status.success(), "{verb}: {}", stderr(&o));
        let help = stdout(&o);
        assert!(
            help.contains("Exit"),
            "{verb} --help says nothing of exit codes:\n{help}"
        );
    }
}

/// `scripts bindings`: typed TypeScript, Java and Go layers of the built-ins and of a user's
/// folder (their compilers run in make test's codegen check); bad input is one line, exit 2.
#[test]
fn scripts_bindings_emit_each_language_and_refuse_bad_input() {
    let ts = cli(&["scripts", "bindings", "--lang", "ts", "--builtin"]);
    assert!(ts.status.success(), "{}", stderr(&ts));
    let ts = stdout(&ts);
    assert!(ts.contains("export const LOCK_ACQUIRE: ScriptDef"), "{ts}");
    assert!(
        ts.contains("readonly outcome: 'held'"),
        "the reply is a union on outcome"
    );
    let go = stdout(&cli(&["scripts", "bindings", "--lang", "go", "--builtin"]));
    assert!(
        go.contains("func CallLockAcquire(ctx context.Context"),
        "{go}"
    );
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/user-scripts");
    let out = tempfile::tempdir().unwrap();
    let java = cli(&[
        "scripts",
        "bindings",
        "--lang",
        "java",
        "--package",
        "com.example.scripts",
        "--out",
        out.path().to_str().unwrap(),
        folder,
    ]);
    assert!(java.status.success(), "{}", stderr(&java));
    let files = std::fs::read_dir(out.path()).unwrap().count();
    assert!(files > 1, "one file per type, got {files}");
    for bad in [
        &["scripts", "bindings", "--lang", "rust", "--builtin"][..],
        &["scripts", "bindings", "--lang", "ts", "/nonexistent-folder"][..],
    ] {
        let o = cli(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).trim().lines().count(),
            1,
            "{bad:?}: {}",
            stderr(&o)
        );
    }
}
