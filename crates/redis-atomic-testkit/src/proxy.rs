//! Fault proxy (being written).
