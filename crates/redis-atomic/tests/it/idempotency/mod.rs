//! Idempotency keys: one execution per key, takeover, replay, storage size.

mod basics;
