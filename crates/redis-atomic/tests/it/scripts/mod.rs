//! The registry matches the script files, the lock file, and what a real server computes.

use redis_atomic::script::{check_lock, registry, render_lock, LockProblem};
use redis_atomic_scripts::{check, header};
use redis_atomic_testkit::{RedisServer, ServerOptions};
use std::path::PathBuf;

fn scripts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts")
}

/// Every generated entry says what its file's header says, and every file is in the registry.
#[test]
fn registry_matches_headers() {
    let mut files = 0;
    for entry in std::fs::read_dir(scripts_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "lua") {
            continue;
        }
        files += 1;
        let name = path.file_stem().unwrap().to_str().unwrap();
        let def =
            redis_atomic::script::find(name).unwrap_or_else(|| panic!("{name} not in registry"));
        let h = header::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            def.keys,
            h.keys
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
        );
        assert_eq!(
            def.args,
            h.args
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
        );
        assert_eq!(def.version, h.version);
        assert_eq!(
            def.flags,
            h.flags
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice()
        );
        assert_eq!(def.retry, h.retry);
        assert_eq!(def.returns, h.returns);
        assert!(
            def.source.starts_with("#!lua"),
            "{name}: shebang must be the first line"
        );
        assert!(
            !def.source.contains("--@include"),
            "{name}: includes not expanded"
        );
        assert_eq!(
            def.sha1,
            sha1_smol::Sha1::from(def.source).digest().to_string()
        );
    }
    assert_eq!(files, registry::ALL.len());
}

/// Each header agrees with its body: highest KEYS[n]/ARGV[n] used equals the declared counts,
/// `no-writes` is declared exactly when the body never writes, and the status words the body
/// returns are exactly those its `returns:` line declares (the reply types are generated from it).
#[test]
fn headers_match_bodies() {
    for def in registry::ALL {
        let h = header::parse(def.source).unwrap();
        let problems = check::check_body(&h, header::body(def.source));
        assert!(problems.is_empty(), "{}: {problems:?}", def.name);
        assert_eq!(
            def.read_only(),
            check::called_commands(def.source)
                .iter()
                .all(|c| !check::WRITE_COMMANDS.contains(&c.as_str()))
        );
    }
}

/// The body checker itself catches drift (so the test above can fail): a wrong key count, a
/// write under `no-writes`, a status word the header does not declare.
#[test]
fn body_checker_catches_drift() {
    let src = "#!lua\n--- summary: s\n--- invariant: i\n--- keys: a\n--- args: x\n--- returns: {'ok', n}\n--- retry: safe\n--- version: 1\nreturn {'ok', redis.call('SET', KEYS[2], ARGV[1])}\n";
    let h = header::parse(src).unwrap();
    assert_eq!(check::check_body(&h, header::body(src)).len(), 1);
    let ro = src
        .replace("#!lua\n", "#!lua flags=no-writes\n")
        .replace("KEYS[2]", "KEYS[1]");
    let h = header::parse(&ro).unwrap();
    assert_eq!(
        check::check_body(&h, header::body(&ro)),
        vec!["flags say no-writes but the body calls SET".to_string()]
    );
    let undeclared = src
        .replace("KEYS[2]", "KEYS[1]")
        .replace("return {'ok',", "return {'done',");
    let h = header::parse(&undeclared).unwrap();
    assert_eq!(check::check_body(&h, header::body(&undeclared)).len(), 2);
    assert!(header::parse("--- summary: x\n").is_err());
    assert!(header::parse(&src.replace("--- retry: safe", "--- retry: maybe")).is_err());
}

/// `scripts.lock` records name, version and SHA1 of every script: changed bytes without a version
/// bump fail here. `UPDATE_SCRIPTS_LOCK=1` (make scripts-lock) rewrites it, but never over a
/// change without a bump.
#[test]
fn scripts_lock_is_current() {
    let path = scripts_dir().join("scripts.lock");
    let recorded = std::fs::read_to_string(&path).unwrap_or_default();
    let problems = check_lock(&recorded);
    let unbumped: Vec<_> = problems
        .iter()
        .filter(|p| matches!(p, LockProblem::ChangedWithoutBump { .. }))
        .collect();
    assert!(
        unbumped.is_empty(),
        "script bytes changed without a version bump: {unbumped:?}"
    );
    if std::env::var_os("UPDATE_SCRIPTS_LOCK").is_some() {
        std::fs::write(&path, render_lock()).unwrap();
        return;
    }
    assert!(
        problems.is_empty(),
        "scripts.lock is stale, run `make scripts-lock`: {problems:?}"
    );
}

/// The lock check notices a changed SHA1 at an unchanged version.
#[test]
fn lock_check_detects_unbumped_change() {
    let lock = render_lock();
    let def = registry::ALL[0];
    let tampered = lock.replace(def.sha1, "0000000000000000000000000000000000000000");
    assert!(check_lock(&tampered).iter().any(
        |p| matches!(p, LockProblem::ChangedWithoutBump { name, .. } if name.ends_with(def.name))
    ));
}

/// A real server computes the same SHA1s, accepts the Function library, and registers every
/// function with the script's flags.
#[test]
fn real_server_agrees() {
    let server = RedisServer::start(ServerOptions::default()).unwrap();
    let mut conn = server.client().get_connection().unwrap();
    for def in registry::ALL {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(def.source)
            .query(&mut conn)
            .unwrap();
        assert_eq!(sha, def.sha1, "{}", def.name);
    }
    let name: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(registry::LIBRARY_SOURCE)
        .query(&mut conn)
        .unwrap();
    assert_eq!(name, registry::LIBRARY_NAME);
    let list: redis::Value = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg(registry::LIBRARY_NAME)
        .query(&mut conn)
        .unwrap();
    let text = format!("{list:?}");
    for def in registry::ALL {
        assert!(
            text.contains(def.function_name()),
            "{} missing from the library",
            def.name
        );
    }
    let ro: Vec<_> = registry::ALL.iter().filter(|d| d.read_only()).collect();
    assert_eq!(text.matches("no-writes").count(), ro.len());
}

/// Every built-in script's `primitive` metric label is the name of its module (`semaphore` for
/// `sem_acquire`, `idempotency` for `idem_begin`, `ratelimit` for `rl_gcra`), never a prefix.
#[test]
fn primitive_labels_are_module_names() {
    const MODULES: [&str; 7] = [
        "lock",
        "semaphore",
        "idempotency",
        "queue",
        "ratelimit",
        "quota",
        "fenced",
    ];
    for def in registry::ALL {
        let primitive = def.primitive();
        assert!(MODULES.contains(&primitive), "{}: {primitive}", def.name);
    }
    let sem = redis_atomic::script::find("sem_extend").unwrap();
    assert_eq!((sem.primitive(), sem.op()), ("semaphore", "extend"));
}
