package io.redisatomic;

import io.redisatomic.scripts.RlPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Decides many identities' limits, each with its own hits, all or nothing in one script call:
 * what a gateway request limited per user, per route and globally at once needs (Envoy's
 * rate-limit descriptors).
 *
 * <p>Invariant: with every entry {@link EntryMode#ENFORCE}, either every entry is charged its hits
 * or none is; no limit admits more than its algorithm permits; hits 0 charges nothing (it decides
 * as a request of one would).
 *
 * <p>Keys ({@link #keys}): one hash tag per call, the caller's (a tenant):
 * {@code <ns>:rl:v1:{<t>}:<i>:<limit name>:<code>} per entry ({@code <t>}, {@code <i>}: digests of
 * the tag and the entry's identity), and with a request id {@code <ns>:rl:v1:{<t>}:req:<p>:<r>}.
 * Not {@link RateLimiter}'s keys: an entry and a policy never share state. Entries naming one key
 * are merged (hits summed, the stricter mode) first. Mechanism: {@code rl_policy} with per-entry
 * hits and modes.
 *
 * <p>Retries: without a request id not retry-safe (an unknown outcome is never resent);
 * {@link #decideWithId} records the admitted decision for the entries' longest period and a
 * resend replays it. Not guaranteed: refunds; atomicity across tags (one call per tag).
 */
public final class EntryLimiter {
    private static final int SCHEMA = 1;
    /** The most entries in one decision. */
    public static final int MAX_ENTRIES = 32;
    private final RedisAtomic client;
    private final Keyspace keyspace;

    EntryLimiter(RedisAtomic client, Keyspace keyspace) {
        this.client = client;
        this.keyspace = keyspace;
    }

    /**
     * How an entry takes part in the decision: {@code ENFORCE} (the default): refusing refuses the
     * request; {@code SHADOW}: decided and charged when it admits, never refuses the request (to
     * observe a new limit first); {@code QUOTA}: the request is refused only when every quota entry
     * refuses.
     */
    public enum EntryMode {
        ENFORCE("h"), SHADOW("s"), QUOTA("q");

        private final String code;

        EntryMode(String code) {
            this.code = code;
        }

        EntryMode stricter(EntryMode o) {
            return this == ENFORCE || o == ENFORCE ? ENFORCE : this == QUOTA || o == QUOTA ? QUOTA : SHADOW;
        }
    }

    /** One limit of one identity with its hits (0: check only) in a decision. */
    public record Entry(Limit limit, String identity, long hits, EntryMode mode) {
        public Entry {
            if (limit == null || hits < 0) {
                throw new BadArgumentException("an entry needs a limit and hits >= 0");
            }
            mode = mode == null ? EntryMode.ENFORCE : mode;
        }

        /** An enforced entry. */
        public static Entry of(Limit limit, String identity, long hits) {
            return new Entry(limit, identity, hits, EntryMode.ENFORCE);
        }
    }

    /** One entry's state after a decision ({@code admits}: this entry alone admits). */
    public record EntryStatus(boolean admits, long remaining, Duration resetAfter, Duration retryAfter) {
    }

    /** A decision with every entry's status (in the caller's order) and whether it was replayed. */
    public record EntriesVerdict(Decision decision, List<EntryStatus> entries, boolean replayed) {
    }

    /** The entries' state keys under {@code tag}, in order. */
    public List<String> keys(String tag, List<Entry> entries) {
        String t = Keyspace.digest(tag, RateLimiter.MAX_KEY_LEN, "hash tag");
        return entries.stream().map(e -> keyspace.key("rl", SCHEMA, t, Keyspace.digest(e.identity(),
                RateLimiter.MAX_KEY_LEN, "identity"), e.limit().name(), e.limit().algorithm().code())).toList();
    }

    /** Charges every entry its hits under {@code tag}, all or nothing. Not retry-safe. */
    public EntriesVerdict decide(String tag, List<Entry> entries) {
        return RedisAtomic.join(decideAsync(tag, entries, null));
    }

    /** The same, remembering {@code requestId}: a repeat replays the decision, charging nothing (retry-safe). */
    public EntriesVerdict decideWithId(String tag, List<Entry> entries, String requestId) {
        if (requestId == null) {
            throw new BadArgumentException("request id must be 1..=" + RateLimiter.MAX_REQUEST_ID_LEN + " bytes");
        }
        return RedisAtomic.join(decideAsync(tag, entries, requestId));
    }

    /** The asynchronous decide; {@code requestId} may be null. */
    public CompletableFuture<EntriesVerdict> decideAsync(String tag, List<Entry> entries, String requestId) {
        try {
            if (entries.isEmpty() || entries.size() > MAX_ENTRIES) {
                throw new BadArgumentException("a decision takes 1..=" + MAX_ENTRIES + " entries, got " + entries.size());
            }
            List<String> keys = keys(tag, entries);
            Map<String, Entry> merged = new LinkedHashMap<>();
            int[] group = new int[entries.size()];
            for (int i = 0; i < entries.size(); i++) {
                merged.merge(keys.get(i), entries.get(i), EntryLimiter::merge);
                group[i] = new ArrayList<>(merged.keySet()).indexOf(keys.get(i));
            }
            return run(tag, merged, group, requestId);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static Entry merge(Entry a, Entry b) {
        if (!a.limit().equals(b.limit())) {
            throw new BadArgumentException("limit \"" + a.limit().name() + "\" of one identity given twice with different settings");
        }
        return new Entry(a.limit(), a.identity(), a.hits() + b.hits(), a.mode().stricter(b.mode()));
    }

    private CompletableFuture<EntriesVerdict> run(String tag, Map<String, Entry> merged, int[] group, String requestId) {
        String t = Keyspace.digest(tag, RateLimiter.MAX_KEY_LEN, "hash tag");
        List<String> mkeys = List.copyOf(merged.keySet());
        String id = requestId == null ? "" : Keyspace.digest(requestId, RateLimiter.MAX_REQUEST_ID_LEN, "request id");
        String first = requestId == null ? keyspace.key("rl", SCHEMA, t, "req", "-") : keyspace.key("rl", SCHEMA, t, "req",
                Keyspace.sha256Hex16(String.join("|", mkeys).getBytes(StandardCharsets.UTF_8)), id);
        Duration ttl = Duration.ZERO;
        List<Object> args = new ArrayList<>(List.of("", id, 0L, ""));
        for (Entry m : merged.values()) {
            if (m.hits() > m.limit().burst()) {
                throw new CostExceedsBurstException(m.hits(), m.limit().burst());
            }
            ttl = m.limit().period().compareTo(ttl) > 0 ? m.limit().period() : ttl;
            Limit l = m.limit();
            args.addAll(List.of(l.algorithm().code(), l.limit(), l.periodUs(), l.burst(), m.hits(), m.mode().code));
        }
        args.set(2, Durations.micros(ttl.compareTo(RateLimiter.MAX_REQUEST_TTL) > 0 ? RateLimiter.MAX_REQUEST_TTL : ttl));
        List<String> all = new ArrayList<>(List.of(first));
        all.addAll(mkeys);
        return client.runAsync(RlPolicy.DEF, all, args, requestId != null).thenApply(raw -> {
            Decision d = Replies.policy(raw, mkeys.size());
            List<EntryStatus> out = new ArrayList<>();
            for (int g : group) {
                Decision.LimitStatus s = d.limits().get(g);
                out.add(new EntryStatus(s.retryAfter().isZero(), s.remaining(), s.resetAfter(), s.retryAfter()));
            }
            return new EntriesVerdict(d, out, d.replayed());
        });
    }
}
