//! `redis-atomic`: a thin binary over [`redis_atomic_cli::run`].
use clap::Parser;

fn main() -> std::process::ExitCode {
    redis_atomic_cli::run(redis_atomic_cli::Cli::parse())
}
