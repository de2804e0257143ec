//! Link arguments of a Node-API addon (napi-rs).
fn main() {
    napi_build::setup();
}
