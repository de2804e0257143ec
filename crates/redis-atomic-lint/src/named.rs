//! Library functions registered by name: `F['x'] = function(KEYS, ARGV) ... end` at the top
//! level, and later `redis.register_function{..., callback = F['x']}`.
//!
//! Why: a library whose functions are also called by another of its functions (the generated
//! batch entry points call each batchable script's function) has to name them, so their
//! callbacks are not written inline. Walked where it is defined, such a body would be an
//! ordinary function: its parameters of unknown origin, its writes and TTLs judged with the
//! library's top level, so the rules that need to know what comes from `ARGV` (an ownership
//! check guarding a `PEXPIRE`) would misjudge it. So a function assigned to a table field at a
//! library's top level is held, unwalked, until a registration names it as its callback, and is
//! walked then as that registration's unit, with `KEYS` and `ARGV` as its parameters. One that
//! no registration names is walked as a plain function at the end of the chunk
//! ([`Walker::chunk`]). Names match by their text without whitespace.

use super::walk::Walker;
use full_moon::ast::{Assignment, Expression, FunctionBody, Var};

impl Walker {
    /// Holds `a` when it assigns one function to one table field at a library's top level
    /// (the target's own reads are walked now); false when it is any other assignment.
    pub(super) fn hold(&mut self, a: &Assignment) -> bool {
        if !self.library_top_level() || a.variables().len() != 1 || a.expressions().len() != 1 {
            return false;
        }
        let (Some(var @ Var::Expression(ve)), Some(Expression::Function(f))) =
            (a.variables().iter().next(), a.expressions().iter().next())
        else {
            return false;
        };
        self.suffixed(ve.prefix(), ve.suffixes());
        self.held
            .push((text_of(&var.to_string()), f.body().clone()));
        true
    }

    /// The held function `callback` names, taken out of the held list.
    pub(super) fn take_held(&mut self, callback: &Expression) -> Option<FunctionBody> {
        let name = text_of(&callback.to_string());
        let at = self.held.iter().position(|(n, _)| *n == name)?;
        Some(self.held.swap_remove(at).1)
    }
}

fn text_of(source: &str) -> String {
    source.chars().filter(|c| !c.is_whitespace()).collect()
}
