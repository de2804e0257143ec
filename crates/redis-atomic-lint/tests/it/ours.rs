//! Our own scripts lint clean, both as files (includes expanded from `scripts/include/`) and as
//! the final sources and Function library the registry ships.

use redis_atomic_lint::{lint_dir, lint_source};
use std::path::PathBuf;

#[test]
fn our_scripts_lint_clean() {
    let scripts = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../redis-atomic/scripts");
    let findings = lint_dir(&scripts).unwrap();
    assert!(findings.is_empty(), "{findings:#?}");
    let registry = redis_atomic::script::registry::ALL;
    for def in registry {
        let findings = lint_source(def.name, def.source).unwrap();
        assert!(findings.is_empty(), "{}: {findings:#?}", def.name);
    }
    let library = redis_atomic::script::registry::LIBRARY_SOURCE;
    let findings = lint_source("library", library).unwrap();
    assert!(findings.is_empty(), "library: {findings:#?}");
}
