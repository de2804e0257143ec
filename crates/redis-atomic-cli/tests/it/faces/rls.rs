//! `bench --rls` through the binary: the in-process gRPC face and the library path, requests of
//! 1 and 4 descriptors, in one run (figures are not asserted: timing belongs to the benchmark).
//! `rls` itself through the binary is `make rls-foreign`'s (Python grpcio + xds-protos).

use super::bench_json;

#[test]
fn bench_rls_reports_both_paths_for_1_and_4_descriptors() {
    let report = bench_json("--rls");
    assert_eq!(report["tasks"], 2);
    let mut seen: Vec<(String, u64)> = Vec::new();
    for p in report["paths"].as_array().unwrap() {
        assert!(p["rate"].as_f64().unwrap() > 0.0, "{report}");
        assert!(p["p50_us"].as_u64().unwrap() > 0, "{report}");
        assert!(p["server_us"].as_f64().unwrap() > 0.0, "{report}");
        seen.push((
            p["path"].as_str().unwrap().into(),
            p["descriptors"].as_u64().unwrap(),
        ));
    }
    seen.sort();
    let expected = [("library", 1), ("library", 4), ("rls", 1), ("rls", 4)];
    assert_eq!(
        seen,
        expected.map(|(p, n)| (p.to_string(), n)).to_vec(),
        "{report}"
    );
}
