package io.redisatomic;

/**
 * This token and fence no longer hold the lease (expired, taken over, or already released: a
 * resent release after a lost reply answers this too). Nothing changed.
 */
public record Lost() implements Release, Extend, End, Queue.Nack {
    @Override
    public String outcome() {
        return "lost";
    }
}
