package io.redisatomic;

/** The keys of one call span cluster hash slots; nothing ran (code {@code cross_slot}). */
public class CrossSlotException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public CrossSlotException(String message) {
        super(ErrorKind.CROSS_SLOT, message, null);
    }

    public CrossSlotException(String message, Throwable cause) {
        super(ErrorKind.CROSS_SLOT, message, cause);
    }
}
