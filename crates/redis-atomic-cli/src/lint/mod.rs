//! Lua lint (being written).
