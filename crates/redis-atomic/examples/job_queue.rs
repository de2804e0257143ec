//! A producer and N workers sharing one delayed job queue, with a progress bar.
//!
//! ```sh
//! cargo run --example job_queue                              # embedded redis-server
//! cargo run --example job_queue -- --jobs 20000 --workers 8 --redis redis://127.0.0.1:6379
//! ```
//! The producer enqueues `--jobs` jobs (every tenth delayed by up to a second); each worker
//! claims batches with a ttl (each job a fenced lease, [`redis_atomic::lease`]), "processes" them,
//! and acks each job, which ends (consumes) its handle. A worker whose claim finds nothing due
//! waits the `retry_after` the queue gives ([`Claim::Empty`]), or a short pause when the queue
//! holds nothing yet ([`Claim::Idle`]: the producer is behind). Some jobs fail now and then (nack
//! with backoff, retried); every `--poison-every`-th job always fails and ends in the dead letters
//! after `max_deliveries`. An ack whose outcome is unknown is repeated by parts, with the job's
//! id, worker and fence read before (a repeat of an ack that ran answers `Acked` again). The
//! summary counts acked and dead jobs and shows a few dead letters.
#![allow(clippy::unwrap_used)]

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use redis_atomic::lease::OwnerToken;
use redis_atomic::queue::{Ack, Claim, Job, Nack, Queue, QueueConfig, RunAt};
use redis_atomic::{Client, ClientConfig, Keyspace};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser, Clone, Debug)]
struct Args {
    /// Redis URL; an embedded redis-server is started when absent.
    #[arg(long)]
    redis: Option<String>,
    /// Jobs to enqueue.
    #[arg(long, default_value_t = 5000)]
    jobs: u64,
    /// Worker tasks.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Jobs per claim.
    #[arg(long, default_value_t = 20)]
    batch: usize,
    /// Every n-th job always fails (0: none).
    #[arg(long, default_value_t = 500)]
    poison_every: u64,
}

/// What a run achieved.
#[derive(Debug, Default)]
struct Summary {
    acked: AtomicU64,
    dead: AtomicU64,
    retried: AtomicU64,
    lost: AtomicU64,
}

fn fails(args: &Args, job: &Job) -> Option<String> {
    let n: u64 = job.id().trim_start_matches("job-").parse().unwrap_or(0);
    if args.poison_every > 0 && n % args.poison_every == 0 {
        return Some(format!("job {n} cannot be processed"));
    }
    // Transient: only on a first delivery, so a retry succeeds (a job failing by chance on all
    // `max_deliveries` would end dead, and the summary could not say how many die).
    (job.deliveries() == 1 && rand::random_range(0..50) == 0)
        .then(|| "transient failure".to_string())
}

async fn produce(queue: &Queue, args: &Args) -> anyhow::Result<()> {
    for n in 0..args.jobs {
        let run_at = if n % 10 == 0 {
            RunAt::After(Duration::from_millis(rand::random_range(0..1000)))
        } else {
            RunAt::Now
        };
        let payload = format!("{{\"resize\":\"img-{n}.png\"}}");
        queue
            .enqueue(&format!("job-{n}"), payload.as_bytes(), run_at)
            .await?;
    }
    Ok(())
}

async fn work(
    queue: Queue,
    args: Args,
    name: OwnerToken,
    summary: Arc<Summary>,
    bar: ProgressBar,
) -> anyhow::Result<()> {
    while summary.acked.load(Ordering::SeqCst) + summary.dead.load(Ordering::SeqCst) < args.jobs {
        let ttl = Duration::from_secs(5);
        let jobs = match queue.claim(&name, ttl, args.batch).await? {
            Claim::Claimed(jobs) => jobs,
            Claim::Empty { retry_after } => {
                tokio::time::sleep(retry_after.min(Duration::from_millis(20))).await;
                continue;
            }
            // Nothing queued or running (yet): the producer is behind.
            _ => {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
        };
        for job in jobs {
            // "Processing": pass job.fence() to every write the job makes, so a store can refuse
            // a worker whose lease was taken over.
            tokio::task::yield_now().await;
            let outcome = match fails(&args, &job) {
                None => match ack(&queue, job).await? {
                    Ack::Acked => &summary.acked,
                    _ => &summary.lost,
                },
                Some(error) => {
                    let backoff = Duration::from_millis(10 * u64::from(job.deliveries()));
                    match job.nack(backoff, &error).await? {
                        Nack::Dead => &summary.dead,
                        Nack::Retrying { .. } => &summary.retried,
                        _ => &summary.lost,
                    }
                }
            };
            outcome.fetch_add(1, Ordering::SeqCst);
            bar.set_position(
                summary.acked.load(Ordering::SeqCst) + summary.dead.load(Ordering::SeqCst),
            );
        }
    }
    Ok(())
}

/// Acks `job`; after an unknown outcome, repeats the ack by parts (retry-safe).
async fn ack(queue: &Queue, job: Job) -> Result<Ack, redis_atomic::Error> {
    let (id, token, fence) = (job.id().to_string(), job.token().clone(), job.fence());
    match job.ack().await {
        Err(e) if e.is_outcome_unknown() => queue.ack(&id, &token, fence).await,
        other => other,
    }
}

/// Runs the producer and the workers to completion on `client`.
async fn run(client: Client, args: Args, bar: ProgressBar) -> anyhow::Result<(Queue, Summary)> {
    let keyspace = Keyspace::new(format!("jobs-{:08x}", rand::random::<u32>()))?;
    let config = QueueConfig::default().max_deliveries(NonZeroU32::new(3).unwrap());
    let queue = Queue::new(client, &keyspace, "thumbnails", config)?;
    let summary = Arc::new(Summary::default());
    let mut workers = Vec::new();
    for n in 0..args.workers {
        let worker = work(
            queue.clone(),
            args.clone(),
            OwnerToken::new(format!("worker-{n}"))?,
            summary.clone(),
            bar.clone(),
        );
        workers.push(tokio::spawn(worker));
    }
    produce(&queue, &args).await?;
    for w in workers {
        w.await??;
    }
    bar.finish();
    let summary = Arc::try_unwrap(summary).map_err(|_| anyhow::anyhow!("workers still running"))?;
    Ok((queue, summary))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (url, _server) = match &args.redis {
        Some(url) => (url.clone(), None),
        None => {
            let server = redis_atomic_testkit::RedisServer::start(Default::default())?;
            (server.url(), Some(server))
        }
    };
    let client = Client::connect(&url, ClientConfig::default()).await?;
    let bar = ProgressBar::new(args.jobs);
    bar.set_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} jobs done · {per_sec} · {elapsed}",
    )?);
    let started = Instant::now();
    let (queue, s) = run(client, args.clone(), bar).await?;
    println!(
        "{} acked, {} dead, {} retried, {} late acks refused in {:.2?} ({} workers, redis {url})",
        s.acked.load(Ordering::SeqCst),
        s.dead.load(Ordering::SeqCst),
        s.retried.load(Ordering::SeqCst),
        s.lost.load(Ordering::SeqCst),
        started.elapsed(),
        args.workers,
    );
    let page = queue.dead_letters(0, 3).await?;
    for d in &page.letters {
        println!(
            "dead: {} after {} deliveries: {}",
            d.id, d.deliveries, d.error
        );
    }
    println!("{:?}", queue.stats().await?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 workers drain 600 jobs: every job ends acked or dead (the poison ones, after 3
    /// deliveries), nothing is left queued or running.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_job_is_acked_or_dead() {
        let server = redis_atomic_testkit::RedisServer::start(Default::default()).unwrap();
        let client = Client::connect(&server.url(), ClientConfig::default())
            .await
            .unwrap();
        let args = Args::parse_from(["job_queue", "--jobs", "600", "--poison-every", "100"]);
        let (queue, s) = run(client, args, ProgressBar::hidden()).await.unwrap();
        assert_eq!(s.dead.load(Ordering::SeqCst), 6);
        assert_eq!(s.acked.load(Ordering::SeqCst), 594);
        let stats = queue.stats().await.unwrap();
        assert_eq!((stats.acked, stats.dead), (594, 6));
        assert_eq!(stats.ready + stats.scheduled + stats.running, 0);
        let page = queue.dead_letters(0, 10).await.unwrap();
        assert!(page
            .letters
            .iter()
            .all(|d| d.deliveries == 3 && d.error.contains("cannot")));
    }
}
