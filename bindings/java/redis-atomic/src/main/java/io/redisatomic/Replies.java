package io.redisatomic;

import io.redisatomic.scripts.RlAnchoredWindow;
import io.redisatomic.scripts.RlFixedWindow;
import io.redisatomic.scripts.RlGcra;
import io.redisatomic.scripts.RlPolicy;
import io.redisatomic.scripts.RlSlidingLog;
import io.redisatomic.scripts.RlSlidingWindow;
import io.redisatomic.scripts.RlTokenBucket;
import java.time.Duration;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The rate-limit scripts' replies as {@link Decision}s: the six single-limit scripts share one
 * reply shape (each has its own generated type), rl_policy has its own.
 */
final class Replies {
    private Replies() {
    }

    static Decision single(Algorithm a, Object raw) {
        return switch (a) {
            case FIXED_WINDOW -> {
                RlFixedWindow.Reply r = RlFixedWindow.decode(raw);
                yield r instanceof RlFixedWindow.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlFixedWindow.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
            case ANCHORED_WINDOW -> {
                RlAnchoredWindow.Reply r = RlAnchoredWindow.decode(raw);
                yield r instanceof RlAnchoredWindow.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlAnchoredWindow.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
            case SLIDING_LOG -> {
                RlSlidingLog.Reply r = RlSlidingLog.decode(raw);
                yield r instanceof RlSlidingLog.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlSlidingLog.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
            case SLIDING_WINDOW -> {
                RlSlidingWindow.Reply r = RlSlidingWindow.decode(raw);
                yield r instanceof RlSlidingWindow.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlSlidingWindow.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
            case TOKEN_BUCKET -> {
                RlTokenBucket.Reply r = RlTokenBucket.decode(raw);
                yield r instanceof RlTokenBucket.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlTokenBucket.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
            case GCRA -> {
                RlGcra.Reply r = RlGcra.decode(raw);
                yield r instanceof RlGcra.Reply.Allowed x ? allowed(x.remaining(), x.resetUs())
                        : limited((RlGcra.Reply.Limited) r, l -> l.retryUs(), l -> l.resetUs(), l -> l.remaining());
            }
        };
    }

    private static Decision allowed(long remaining, long resetUs) {
        Duration reset = us(resetUs);
        return new Decision.Allowed(remaining, reset, List.of(new Decision.LimitStatus(remaining, reset, Duration.ZERO)), false);
    }

    private static <L> Decision limited(L l, ToLongFunction<L> retryUs, ToLongFunction<L> resetUs, ToLongFunction<L> remaining) {
        return limited(retryUs.applyAsLong(l), resetUs.applyAsLong(l), remaining.applyAsLong(l));
    }

    private static Decision limited(long retryUs, long resetUs, long remaining) {
        Duration retry = us(retryUs);
        Duration reset = us(resetUs);
        return new Decision.Limited(retry, reset, List.of(new Decision.LimitStatus(remaining, reset, retry)), false);
    }

    static Decision policy(Object raw, int expected) {
        RlPolicy.Reply reply = RlPolicy.decode(raw);
        List<RlPolicy.LimitsItem> items = reply instanceof RlPolicy.Reply.Allowed r ? r.limits()
                : reply instanceof RlPolicy.Reply.Replayed r ? r.limits()
                : ((RlPolicy.Reply.Limited) reply).limits();
        if (items.size() != expected) {
            throw new BadReplyException("rl_policy: " + items.size() + " limits in the reply, the policy has " + expected);
        }
        List<Decision.LimitStatus> limits = items.stream()
                .map(i -> new Decision.LimitStatus(i.remaining(), us(i.resetUs()), us(i.retryUs()))).toList();
        if (reply instanceof RlPolicy.Reply.Allowed r) {
            return new Decision.Allowed(r.remaining(), us(r.resetUs()), limits, false);
        }
        if (reply instanceof RlPolicy.Reply.Replayed r) {
            return new Decision.Allowed(r.remaining(), us(r.resetUs()), limits, true);
        }
        RlPolicy.Reply.Limited r = (RlPolicy.Reply.Limited) reply;
        return new Decision.Limited(us(r.retryUs()), us(r.resetUs()), limits, false);
    }

    private static Duration us(long micros) {
        return Duration.ofNanos(Math.multiplyExact(micros, 1000L));
    }
}
