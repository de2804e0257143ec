//! What the linter knows about a Lua value: where it came from (KEYS, ARGV, a literal, a reply)
//! and whether it may be fractional. A small set of flags, joined at every merge point: the
//! analysis is a one-pass, flow-insensitive approximation, enough for the patterns the rules name.

use std::ops::{BitAnd, BitOr};

/// Origin flags of a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Val(u16);

impl Val {
    /// Nothing known.
    pub const NONE: Val = Val(0);
    /// An element of KEYS.
    pub const KEY: Val = Val(1);
    /// The KEYS table itself (or a Function callback's first parameter).
    pub const KEYS_TABLE: Val = Val(1 << 1);
    /// The ARGV table itself (or a Function callback's second parameter).
    pub const ARGV_TABLE: Val = Val(1 << 2);
    /// Derived from an ARGV element.
    pub const ARGV: Val = Val(1 << 3);
    /// A string literal.
    pub const LITERAL: Val = Val(1 << 4);
    /// Built by concatenation or string.format.
    pub const BUILT: Val = Val(1 << 5);
    /// May be a non-integer number.
    pub const FLOAT: Val = Val(1 << 6);
    /// Derived from a redis.call reply.
    pub const REPLY: Val = Val(1 << 7);
    /// A constant (literal number, or clamped by math.min with a constant).
    pub const CONST: Val = Val(1 << 8);

    /// Whether any flag of `other` is set.
    pub fn has(self, other: Val) -> bool {
        self.0 & other.0 != 0
    }

    /// Without the flags of `other`.
    pub fn without(self, other: Val) -> Val {
        Val(self.0 & !other.0)
    }

    /// What a field or element of this value carries over (`rec.gen`, `t[i]`).
    pub fn element(self) -> Val {
        if self.has(Val::KEYS_TABLE) {
            return Val::KEY;
        }
        if self.has(Val::ARGV_TABLE) {
            return Val::ARGV;
        }
        self & (Val::ARGV | Val::REPLY | Val::FLOAT)
    }

    /// What arithmetic on this value carries over.
    pub fn numeric(self) -> Val {
        self & (Val::ARGV | Val::REPLY | Val::FLOAT | Val::CONST)
    }
}

impl BitOr for Val {
    type Output = Val;
    fn bitor(self, rhs: Val) -> Val {
        Val(self.0 | rhs.0)
    }
}

impl BitAnd for Val {
    type Output = Val;
    fn bitand(self, rhs: Val) -> Val {
        Val(self.0 & rhs.0)
    }
}
