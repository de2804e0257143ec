//! The table of entries: one [`Bench`] per benchmark (like verify's `CHECKS`), each naming its
//! workload's setup, and the `--help` text listing them.

use super::workload::SetupFn;
use super::{cas, drain, fenced, idempotency, lock, queue, quota, ratelimit, semaphore};

/// One entry of the table.
pub struct Bench {
    /// Entry name (`--only`).
    pub name: &'static str,
    /// What one decision is.
    pub decision: &'static str,
    /// Workload constructor.
    pub setup: SetupFn,
    /// A fixed number of tasks instead of `--concurrency` (contenders on one hot key).
    pub tasks: Option<usize>,
}

impl Bench {
    const fn new(name: &'static str, decision: &'static str, setup: SetupFn) -> Bench {
        Bench {
            name,
            decision,
            setup,
            tasks: None,
        }
    }

    const fn tasks(mut self, n: usize) -> Bench {
        self.tasks = Some(n);
        self
    }
}

/// Every entry, in report order.
pub const BENCHES: &[Bench] = &[
    Bench::new(
        "lock",
        "acquire | release, alternating on one resource per task; reference: the classic fenced SET NX PX + INCR script | compare-and-delete",
        lock::cycle,
    ),
    Bench::new(
        "lock-extend",
        "extend a held lock (taken before each phase), one resource per task",
        lock::extend,
    ),
    Bench::new(
        "idempotency",
        "begin on a fresh key | complete with a 512 B response",
        idempotency::setup,
    ),
    Bench::new(
        "queue",
        "enqueue 128 B | claim 1 | ack, one queue shared by all tasks",
        queue::setup,
    ),
    Bench::new(
        "queue-drain-1",
        "claim a batch of 1 | ack each job, draining a backlog (filled before each phase)",
        |c| drain::setup(c, 1),
    ),
    Bench::new(
        "queue-drain-10",
        "claim a batch of 10 | ack each job, draining a backlog (filled before each phase)",
        |c| drain::setup(c, 10),
    ),
    Bench::new(
        "queue-drain-100",
        "claim a batch of 100 | ack each job, draining a backlog (filled before each phase)",
        |c| drain::setup(c, 100),
    ),
    Bench::new(
        "ratelimit",
        "consume 1 on a GCRA limit (never refused), one identity per task; reference: the classic float GCRA",
        ratelimit::gcra,
    ),
    Bench::new(
        "ratelimit-fw",
        "consume 1 on a fixed window (never refused), one identity per task; reference: the classic INCR + EXPIRE",
        ratelimit::fixed_window,
    ),
    Bench::new(
        "ratelimit-aw",
        "consume 1 on an anchored window (never refused), one identity per task; reference: the classic INCR + EXPIRE",
        ratelimit::anchored_window,
    ),
    Bench::new(
        "ratelimit-sl",
        "consume 1 on a sliding log of 10 000 per 100 ms (never refused), one identity per task; reference: the classic sorted-set sliding log",
        ratelimit::sliding_log,
    ),
    Bench::new(
        "ratelimit-sw",
        "consume 1 on a sliding window (never refused), one identity per task; reference: the classic two-counter window",
        ratelimit::sliding_window,
    ),
    Bench::new(
        "ratelimit-tb",
        "consume 1 on a token bucket (never refused), one identity per task; reference: the classic float token bucket",
        ratelimit::token_bucket,
    ),
    Bench::new(
        "ratelimit-policy",
        "consume 1 on a policy of GCRA + a daily fixed window (rl_policy), one identity per task",
        ratelimit::policy,
    ),
    Bench::new(
        "quota",
        "bounded add +1 | -1 on [0, 10^6], one counter per task",
        quota::setup,
    ),
    Bench::new(
        "semaphore",
        "acquire | release of a permit (capacity 4), one semaphore per task",
        semaphore::setup,
    ),
    Bench::new(
        "fenced-write",
        "one SET under an increasing fence, one resource per task",
        fenced::setup,
    ),
    Bench::new(
        "cas-1",
        cas::DECISION,
        cas::setup).tasks(1,
    ),
    Bench::new(
        "cas-16",
        cas::DECISION,
        cas::setup).tasks(16,
    ),
    Bench::new(
        "cas-64",
        cas::DECISION,
        cas::setup).tasks(64,
    ),
];

/// The entries for `bench --help`.
pub(super) fn help() -> String {
    let mut help = String::from("Entries (--only NAME):\n");
    for b in BENCHES {
        let tasks = b
            .tasks
            .map(|n| format!(" [{n} contenders]"))
            .unwrap_or_default();
        help.push_str(&format!("  {:<17} {}{tasks}\n", b.name, b.decision));
    }
    help.push_str(concat!(
        "\nColumns: decisions/s through the library and as raw EVALSHA of the same scripts, their ",
        "ratio (and its range over the rounds), p50/p99 latency, server µs and client-sent ",
        "commands per library decision (INFO commandstats), the server's CPU share while each ",
        "path ran (INFO cpu), MEMORY USAGE of one record. An entry with a reference also times ",
        "that classic script, raw, as a third path (server µs against ours in the notes). ",
        "queue-drain-N: every claim and every ack is a decision, so jobs/s = dec/s × N/(N+1). ",
        "cas-N: N contenders; library = Cas::update (WATCH, GET, MULTI, SET, EXEC), raw = the ",
        "same GET/SET as one script, so ratio = CAS ÷ script; the notes give the abort rate. ",
        "One connection: --connections 1.",
        "\n\nExit codes: 0 measured; 2 usage (an unknown entry, a value out of range) or ",
        "connection errors.",
    ));
    help
}
