package io.redisatomic;

/**
 * The watchdog's tuning, as the Rust library's {@code WatchdogConfig}: renew after
 * {@code renewFraction} of the lease (in (0, 1); default 1/3), and declare the lease lost
 * ({@link LeaseLostException.Reason#UNCONFIRMED}) {@code marginFraction} of it before the proven
 * lease ends (in [0, 1); default 0.05), so the holder stops before another can take it even with
 * some clock drift between client and server.
 */
public record WatchConfig(double renewFraction, double marginFraction) {
    public WatchConfig {
        if (!(renewFraction > 0 && renewFraction < 1) || !(marginFraction >= 0 && marginFraction < 1)
                || renewFraction + marginFraction >= 1) {
            throw new BadArgumentException("renewFraction must be in (0, 1), marginFraction in [0, 1), their sum below 1; got "
                    + renewFraction + ", " + marginFraction);
        }
    }

    /** Renew every third of the lease; lost 5 % before its proven end. */
    public static WatchConfig defaults() {
        return new WatchConfig(1.0 / 3, 0.05);
    }
}
