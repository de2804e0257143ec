package io.redisatomic;

/**
 * The vocabulary's error codes and what each says about the call, in one table (docs/vocabulary.md):
 * whether nothing ran and whether a prompt retry may succeed. Exceptions whose facts depend on the
 * call (an unknown outcome, a server's refusal by code) refine them.
 */
enum ErrorKind {
    NOT_SENT("not_sent", true, true),
    REJECTED("rejected", true, false),
    OUTCOME_UNKNOWN("outcome_unknown", false, false),
    WRONG_TYPE("wrong_type", false, false),
    BAD_ARGUMENT("bad_argument", true, false),
    COST_EXCEEDS_BURST("cost_exceeds_burst", true, false),
    BAD_REPLY("bad_reply", false, false),
    CROSS_SLOT("cross_slot", true, false),
    SERVER_ERROR("server_error", false, false),
    CONNECTION("connection", true, true),
    TLS("tls", true, false),
    CLIENT("client", true, false),
    HANDLE_ENDED("handle_ended", true, false),
    LEASE_LOST("lease_lost", false, false);

    final String code;
    final boolean nothingRan;
    final boolean transientFailure;

    ErrorKind(String code, boolean nothingRan, boolean transientFailure) {
        this.code = code;
        this.nothingRan = nothingRan;
        this.transientFailure = transientFailure;
    }
}
