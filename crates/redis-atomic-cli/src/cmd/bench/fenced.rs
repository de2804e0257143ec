//! The fenced write's benchmark: each task owns one resource and writes one value to it with a
//! fence that grows by one per call, so every write is applied on both paths. The raw path sends
//! the write spec `set 1 <value>` the library encodes for one `Write::set`. A record is a
//! resource after one write: its fence record and its data key.

use super::workload::{evalsha_dyn, ms, BenchCtx, Conn, Decided, Path, Record, Workload};
use redis_atomic::fenced::{Fenced, FencedWrites};
use redis_atomic::script::registry::{FencedWriteReply, FENCED_WRITE};
use redis_atomic::write::Write;
use redis_atomic::{Arg, Fence};
use std::time::Duration;

const VALUE: &[u8] = b"balance=1042";
/// How long a fence record is kept after its last write (the library's default, set explicitly
/// so both paths send the same).
const RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

struct FencedBench {
    fenced: FencedWrites,
}

pub(super) fn setup(ctx: BenchCtx) -> anyhow::Result<Box<dyn Workload>> {
    let fenced = FencedWrites::new(ctx.client, ctx.keyspace).with_retention(RETENTION)?;
    Ok(Box::new(FencedBench { fenced }))
}

impl FencedBench {
    /// The fence record and the data key of `resource`.
    fn keys(&self, resource: &str) -> anyhow::Result<[String; 2]> {
        let fence = self.fenced.keys(resource)?.fence;
        Ok([fence, self.fenced.key(resource, "account")?])
    }

    /// One write of `VALUE` to `resource`'s data key under `fence`, through the library.
    async fn write(&self, resource: &str, fence: Fence) -> anyhow::Result<Vec<String>> {
        let keys = self.keys(resource)?;
        let writes = [Write::set(keys[1].clone(), VALUE)];
        let got = self.fenced.fenced_write(resource, fence, &writes).await?;
        expect!(got, Fenced::Applied { .. });
        Ok(keys.to_vec())
    }
}

fn resource(path: Path, task: usize) -> String {
    format!("{}-{task}", path.name())
}

impl Workload for FencedBench {
    fn library(&self, task: usize, i: u64) -> Decided<'_> {
        Box::pin(async move {
            self.write(&resource(Path::Library, task), Fence(i + 1))
                .await?;
            Ok(())
        })
    }

    fn raw<'a>(&'a self, conn: &'a mut Conn, task: usize, i: u64) -> Decided<'a> {
        Box::pin(async move {
            let [record, data] = self.keys(&resource(Path::Raw, task))?;
            let fence = Arg::Int(i64::try_from(i + 1)?);
            let args = [
                fence,
                ms(RETENTION),
                "set".into(),
                Arg::Int(1),
                VALUE.into(),
            ];
            let got = evalsha_dyn(conn, &FENCED_WRITE, &[&record, &data], &args).await?;
            expect!(got, FencedWriteReply::Applied { .. });
            Ok(())
        })
    }

    fn record(&self) -> Record<'_> {
        Box::pin(self.write("account-4b1c-9f0e-7a2d", Fence(1)))
    }
}
