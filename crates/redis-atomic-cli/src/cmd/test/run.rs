//! Running cases against a real server: each case once through `EVALSHA` of the script's
//! expanded source and once through `FCALL` of the folder's Function library, on a flushed
//! database, so the two delivery paths a deployment may use are both held to the fixture.
//!
//! A server error reply is a value here (it may be what the case expects); only a transport
//! failure (connection lost, no reply within [`REPLY_TIMEOUT`]) stops the run, since the
//! connection can no longer be trusted. `no-writes` scripts go through `EVALSHA_RO` /
//! `FCALL_RO`, as the client sends them, so a wrong flag shows here first.

use super::expect::{error_text, render, Expected, Mismatch};
use super::model::{Case, Outcome};
use crate::cmd::scripts::UserFolder;
use anyhow::{bail, Context as _};
use redis::Value;
use redis_atomic_scripts::ScriptFile;
use std::time::Duration;

/// Longest wait for one reply: a script that does not return (an unbounded loop) ends the run
/// instead of hanging it.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// The two ways a script is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// `EVALSHA` (`EVALSHA_RO` for `no-writes`) of the script's SHA1.
    Evalsha,
    /// `FCALL` (`FCALL_RO`) of the script's function in the folder's library.
    Fcall,
}

impl Path {
    /// Both paths, in run order.
    pub const BOTH: [Path; 2] = [Path::Evalsha, Path::Fcall];

    /// `evalsha` / `fcall`.
    pub fn as_str(self) -> &'static str {
        match self {
            Path::Evalsha => "evalsha",
            Path::Fcall => "fcall",
        }
    }
}

/// A reply or an error reply; transport failures are not replies.
type Reply = Result<Value, String>;

/// A connection to the test server with the folder's scripts and library loaded.
pub struct Runner {
    conn: redis::Connection,
}

impl Runner {
    /// Connects to `url` (timeouts of [`REPLY_TIMEOUT`]), with `tls` for a `rediss://` URL.
    pub fn connect(url: &str, tls: Option<&redis_atomic::TlsOptions>) -> anyhow::Result<Runner> {
        let client = redis_atomic::client::redis_client(url, tls).context("parsing --url")?;
        let conn = client
            .get_connection_with_timeout(REPLY_TIMEOUT)
            .with_context(|| format!("connecting to {}", redact(url)))?;
        conn.set_read_timeout(Some(REPLY_TIMEOUT))?;
        conn.set_write_timeout(Some(REPLY_TIMEOUT))?;
        Ok(Runner { conn })
    }

    /// Loads every script (`SCRIPT LOAD`, checking the SHA1 the server computes against ours)
    /// and the folder's library (`FUNCTION LOAD REPLACE`, once per run).
    pub fn load(&mut self, folder: &UserFolder) -> anyhow::Result<()> {
        for script in &folder.scripts {
            let sha = self.send(&["SCRIPT", "LOAD", script.source()])?;
            if sha != Ok(Value::BulkString(script.sha1.clone().into_bytes())) {
                bail!("SCRIPT LOAD of {} replied {}", script.name, show(&sha));
            }
        }
        let source = folder.library_source();
        if let Err(e) = self.send(&["FUNCTION", "LOAD", "REPLACE", &source])? {
            bail!("FUNCTION LOAD of library {}: {e}", folder.library.name);
        }
        Ok(())
    }

    /// Keys in the selected database (`DBSIZE`).
    pub fn dbsize(&mut self) -> anyhow::Result<i64> {
        match self.send(&["DBSIZE"])? {
            Ok(Value::Int(n)) => Ok(n),
            other => bail!("DBSIZE replied {}", show(&other)),
        }
    }

    /// One command; `Ok(Err(text))` for an error reply, `Err` for a transport failure.
    fn send<S: AsRef<str>>(&mut self, args: &[S]) -> anyhow::Result<Reply> {
        let Some((name, rest)) = args.split_first() else {
            bail!("empty command");
        };
        let mut cmd = redis::cmd(name.as_ref());
        for arg in rest {
            cmd.arg(arg.as_ref());
        }
        match cmd.query::<Value>(&mut self.conn) {
            Ok(Value::ServerError(e)) => Ok(Err(error_text(&e))),
            Ok(v) => Ok(Ok(v)),
            Err(e) => match redis::ServerError::try_from(e) {
                Ok(server) => Ok(Err(error_text(&server))),
                Err(e) if e.is_timeout() => Err(anyhow::anyhow!(
                    "no reply within {} s to `{}` (a script that does not return?)",
                    REPLY_TIMEOUT.as_secs(),
                    name.as_ref()
                )),
                Err(e) => Err(e).context("connection to the test server"),
            },
        }
    }

    /// Runs `case` through `path` on a flushed database; the mismatches (empty: passed).
    pub fn run(
        &mut self,
        folder: &UserFolder,
        script: &ScriptFile,
        case: &Case,
        path: Path,
    ) -> anyhow::Result<Vec<Mismatch>> {
        if let Err(e) = self.send(&["FLUSHDB"])? {
            bail!("FLUSHDB: {e}");
        }
        for (i, command) in case.given.iter().enumerate() {
            if let Err(e) = self.send(command)? {
                return Ok(vec![Mismatch {
                    path: format!("given[{i}] ({})", command.join(" ")),
                    expected: "a reply".into(),
                    got: format!("error {e:?}"),
                    whole: None,
                }]);
            }
        }
        let reply = self.send(&call(folder, script, case, path))?;
        let mut mismatches: Vec<Mismatch> = outcome(&case.outcome, &reply).into_iter().collect();
        for (i, after) in case.after.iter().enumerate() {
            let got = self.send(&after.command)?;
            mismatches.extend(
                expect(&after.reply, &got, &format!("after[{i}]")).map(|mut m| {
                    m.path = format!("{} of {}", m.path, after.command.join(" "));
                    m
                }),
            );
        }
        Ok(mismatches)
    }
}

/// The command calling `script` with the case's keys and args through `path`.
fn call(folder: &UserFolder, script: &ScriptFile, case: &Case, path: Path) -> Vec<String> {
    let ro = script.header.read_only();
    let (verb, target) = match path {
        Path::Evalsha => (
            if ro { "EVALSHA_RO" } else { "EVALSHA" },
            script.sha1.clone(),
        ),
        Path::Fcall => (
            if ro { "FCALL_RO" } else { "FCALL" },
            folder.library.function_name(&script.name),
        ),
    };
    let mut cmd = vec![verb.to_string(), target, case.keys.len().to_string()];
    cmd.extend(case.keys.iter().cloned());
    cmd.extend(case.args.iter().cloned());
    cmd
}

/// The call's reply against the case's expected reply or error prefix.
fn outcome(outcome: &Outcome, reply: &Reply) -> Option<Mismatch> {
    match (outcome, reply) {
        (Outcome::Reply(e), got) => expect(e, got, "reply"),
        (Outcome::Error(prefix), Err(text)) if text.starts_with(prefix.as_str()) => None,
        (Outcome::Error(prefix), got) => Some(Mismatch {
            path: "reply".into(),
            expected: format!("an error starting with {prefix:?}"),
            got: show(got),
            whole: None,
        }),
    }
}

fn expect(expected: &Expected, got: &Reply, path: &str) -> Option<Mismatch> {
    match got {
        Ok(value) => expected.diff(value, path),
        Err(_) => Some(Mismatch {
            path: path.to_string(),
            expected: expected.to_string(),
            got: show(got),
            whole: None,
        }),
    }
}

fn show(reply: &Reply) -> String {
    match reply {
        Ok(v) => render(v),
        Err(e) => format!("error {e:?}"),
    }
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}
