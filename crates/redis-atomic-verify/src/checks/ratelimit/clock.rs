//! Which window an admission fell in: the server's clock estimated from the check's clock plus
//! an offset measured with `TIME`, and the reply's exact `reset`.

use super::super::{CheckCtx, CheckResult};
use redis_atomic_testkit::history::WindowPosition;
use std::ops::Range;
use std::time::{Duration, Instant};

/// µs of a duration, saturated.
fn us(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// Server clock minus the check's clock (µs), from the midpoint of the fastest of up to ten
/// `TIME` round trips (the midpoint is off by at most half the round trip). Bookkeeping, so it
/// must not fail the check: under faults a pooled connection may still be dead from the previous
/// check's, and on a loaded machine a reply may be slow. Failed round trips are repeated for up
/// to 10 s.
pub(super) async fn offset(ctx: &CheckCtx) -> CheckResult<i64> {
    let give_up = Instant::now() + Duration::from_secs(10);
    let mut best: Option<(i64, i64)> = None; // (round trip, offset)
    let mut samples = 0;
    while samples < 10 {
        let before = us(ctx.clock());
        let reply = ctx.client.command(&redis::cmd("TIME")).await;
        let after = us(ctx.clock());
        match reply {
            Ok(time) => {
                samples += 1;
                let sample = (after - before, time_us(time)? - (before + after) / 2);
                best = Some(best.map_or(sample, |b| b.min(sample)));
                if sample.0 < 2_000 {
                    break; // good enough: within 1 ms
                }
            }
            Err(e) if Instant::now() > give_up => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
        if Instant::now() > give_up && best.is_some() {
            break;
        }
    }
    best.map(|(_, offset)| offset)
        .ok_or_else(|| err!("no TIME reply"))
}

/// The server's time (µs) of a decision made within `span` (the check's clock): its midpoint
/// plus `offset`; None when the reply took longer than `longest` µs to be attributed.
fn decided(span: &Range<Duration>, offset: i64, longest: i64) -> Option<i64> {
    let (start, end) = (us(span.start), us(span.end));
    (end - start <= longest).then(|| (start + end) / 2 + offset)
}

/// The window of an admission decided within `span` (the check's clock) whose reply said
/// `reset`, that being `windows` periods minus the elapsed part of the window (1 for a fixed
/// window, 2 for the sliding window counter). None when the reply took over a quarter period:
/// with the offset's error, the estimate might then round to the wrong window.
pub(super) fn position(
    span: &Range<Duration>,
    reset: Duration,
    offset: i64,
    period: Duration,
    windows: u32,
) -> Option<WindowPosition> {
    let period_us = us(period);
    let decided = decided(span, offset, period_us / 4)?;
    let reset = us(reset);
    let elapsed = (period_us * i64::from(windows) - reset).clamp(0, period_us - 1);
    let start = decided - elapsed;
    let window = u64::try_from((start + period_us / 2).div_euclid(period_us)).ok()?;
    Some(WindowPosition {
        window,
        elapsed: Duration::from_micros(u64::try_from(elapsed).ok()?),
    })
}

/// An anchored window's admission: its window's end (µs on the server's clock: the decision's
/// estimated time plus `reset`, in [`WindowPosition::window`]) and its offset `period − reset`,
/// for the testkit's `check_anchored_windows`. The offset's error is common to every decision, so
/// ends of one window differ only by their spans (and `PTTL`'s whole ms): None when the reply took
/// over an eighth of the period, which keeps them well within the quarter period the checker needs.
pub(super) fn anchored_end(
    span: &Range<Duration>,
    reset: Duration,
    offset: i64,
    period: Duration,
) -> Option<WindowPosition> {
    let period_us = us(period);
    let decided = decided(span, offset, period_us / 8)?;
    let elapsed = (period_us - us(reset)).clamp(0, period_us - 1);
    Some(WindowPosition {
        window: u64::try_from(decided.checked_add(us(reset))?).ok()?,
        elapsed: Duration::from_micros(u64::try_from(elapsed).ok()?),
    })
}

/// The server clock in µs from a `TIME` reply, `[seconds, microseconds]` as decimal texts.
/// Any other shape, or numbers out of range (whose product would overflow), is a typed
/// [`redis_atomic::Error::BadReply`]: a server's reply never panics the check.
fn time_us(reply: redis::Value) -> Result<i64, redis_atomic::Error> {
    let bad = |detail: &str| redis_atomic::Error::BadReply {
        script: "TIME",
        detail: detail.into(),
    };
    let parts: Vec<String> =
        redis::from_redis_value(reply).map_err(|_| bad("not an array of texts"))?;
    let [secs, micros] = parts.as_slice() else {
        return Err(bad("not two items"));
    };
    let number = |text: &str| text.parse::<i64>().ok().filter(|n| *n >= 0);
    let (Some(secs), Some(micros)) = (number(secs), number(micros)) else {
        return Err(bad("not two non-negative integers"));
    };
    secs.checked_mul(1_000_000)
        .and_then(|us| us.checked_add(micros))
        .filter(|_| micros < 1_000_000)
        .ok_or_else(|| bad("seconds or microseconds out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use redis::Value;
    use redis_atomic_testkit::arb;

    fn time(parts: &[&str]) -> Value {
        Value::Array(
            parts
                .iter()
                .map(|p| Value::BulkString(p.as_bytes().to_vec()))
                .collect(),
        )
    }

    /// A real reply reads as µs; wrong shapes and numbers that would overflow are typed errors
    /// (the seconds were once multiplied unchecked).
    #[test]
    fn time_replies() {
        assert_eq!(
            time_us(time(&["1700000000", "250"])).unwrap(),
            1_700_000_000_000_250
        );
        for bad in [
            time(&["1"]),
            time(&["1", "2", "3"]),
            time(&["9223372036854775807", "0"]),
            time(&["-1", "0"]),
            time(&["1", "1000000"]),
            time(&["x", "0"]),
            Value::Nil,
            Value::Int(5),
        ] {
            assert!(matches!(
                time_us(bad),
                Err(redis_atomic::Error::BadReply { script: "TIME", .. })
            ),);
        }
    }

    /// The window comes from the estimate, the offset into it from `reset`, exactly; a slow
    /// reply is not attributed.
    #[test]
    fn positions() {
        let ms = Duration::from_millis;
        let p = ms(200);
        // Decided at server time 1 030 ms (check clock 30 ms, offset 1 s): window 5, 30 ms in.
        let span = ms(29)..ms(31);
        let fixed = position(&span, ms(170), 1_000_000, p, 1).unwrap();
        assert_eq!((fixed.window, fixed.elapsed), (5, ms(30)));
        let sliding = position(&span, ms(370), 1_000_000, p, 2).unwrap();
        assert_eq!((sliding.window, sliding.elapsed), (5, ms(30)));
        // 40 ms off (the offset's error) still rounds to the same window.
        let off = position(&span, ms(170), 1_040_000, p, 1).unwrap();
        assert_eq!(off.window, 5);
        assert_eq!(position(&(ms(0)..ms(60)), ms(170), 1_000_000, p, 1), None);
        // Anchored: the end is the decision's server time plus reset; 30 ms is over p / 8.
        let end = anchored_end(&span, ms(170), 1_000_000, p).unwrap();
        assert_eq!((end.window, end.elapsed), (1_200_000, ms(30)));
        assert_eq!(anchored_end(&(ms(0)..ms(30)), ms(170), 1_000_000, p), None);
    }

    proptest! {
        /// Any reply to `TIME` is a time or a typed error, never a panic.
        #[test]
        fn time_answers_any_value(reply in arb::reply()) {
            let _ = time_us(reply);
        }
    }
}
