//! Idempotency keys: one execution per key, takeover, replay, storage size; and under faults.

mod basics;
mod faults;
