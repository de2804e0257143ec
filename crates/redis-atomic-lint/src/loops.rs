//! `unbounded-loop`: a loop is suspicious when nothing visible bounds it — a constant
//! condition (`while true`, `until false`), a condition that calls Redis (draining a collection of
//! unknown size), a condition nothing in the body changes (and no `break`/`return`), or a numeric
//! `for` up to a value from ARGV or a reply that no `math.min` clamps.

use super::value::Val;
use super::walk::{name_of, node_pos, tok_pos, Walker};
use full_moon::ast::{
    Assignment, Block, Expression, FunctionArgs, FunctionCall, LastStmt, LocalAssignment,
    NumericFor, Prefix, Repeat, UnOp, Var, While,
};
use full_moon::tokenizer::{Symbol, TokenType};
use full_moon::visitors::{Visit, Visitor};
use std::collections::HashSet;

/// Names a loop body may change, and whether it can leave early.
#[derive(Default)]
struct BodyEffects {
    changed: HashSet<String>,
    exits: bool,
}

fn var_root(var: &Var) -> Option<String> {
    match var {
        Var::Name(tok) => Some(name_of(tok).to_string()),
        Var::Expression(ve) => match ve.prefix() {
            Prefix::Name(tok) => Some(name_of(tok).to_string()),
            _ => None,
        },
        _ => None,
    }
}

impl Visitor for BodyEffects {
    fn visit_assignment(&mut self, a: &Assignment) {
        self.changed
            .extend(a.variables().iter().filter_map(var_root));
    }
    fn visit_local_assignment(&mut self, a: &LocalAssignment) {
        self.changed
            .extend(a.names().iter().map(|n| name_of(n).to_string()));
    }
    fn visit_function_call(&mut self, call: &FunctionCall) {
        if let Prefix::Name(tok) = call.prefix() {
            self.changed.insert(name_of(tok).to_string());
        }
    }
    fn visit_function_args(&mut self, args: &FunctionArgs) {
        if let FunctionArgs::Parentheses { arguments, .. } = args {
            for arg in arguments.iter() {
                if let Expression::Var(v) = arg {
                    self.changed.extend(var_root(v));
                }
            }
        }
    }
    fn visit_last_stmt(&mut self, _: &LastStmt) {
        self.exits = true;
    }
}

/// Names a condition reads, and whether it calls anything.
#[derive(Default)]
struct CondReads {
    names: HashSet<String>,
    calls: bool,
}

impl Visitor for CondReads {
    fn visit_var(&mut self, var: &Var) {
        self.names.extend(var_root(var));
    }
    fn visit_function_call(&mut self, _: &FunctionCall) {
        self.calls = true;
    }
}

/// `Some(truthiness)` of a constant condition.
fn constant(expr: &Expression) -> Option<bool> {
    match expr {
        Expression::Symbol(tok) => match tok.token().token_type() {
            TokenType::Symbol {
                symbol: Symbol::True,
            } => Some(true),
            TokenType::Symbol {
                symbol: Symbol::False | Symbol::Nil,
            } => Some(false),
            _ => None,
        },
        Expression::Number(_)
        | Expression::String(_)
        | Expression::TableConstructor(_)
        | Expression::Function(_) => Some(true),
        Expression::Parentheses { expression, .. } => constant(expression),
        Expression::UnaryOperator {
            unop: UnOp::Not(_),
            expression,
        } => constant(expression).map(|b| !b),
        _ => None,
    }
}

/// Whether nothing in `body` can change `cond` (and the body has no early exit).
fn never_changes(cond: &Expression, body: &Block) -> bool {
    let mut reads = CondReads::default();
    cond.visit(&mut reads);
    let mut effects = BodyEffects::default();
    body.visit(&mut effects);
    !reads.calls && !effects.exits && reads.names.is_disjoint(&effects.changed)
}

impl Walker {
    /// `while cond do ... end`.
    pub fn while_loop(&mut self, w: &While) {
        let before = self.redis_calls;
        self.eval(w.condition());
        let calls_redis = self.redis_calls > before;
        self.block(w.block());
        let why = if constant(w.condition()) == Some(true) {
            Some("`while true` has no bound in its condition")
        } else {
            self.loop_problem(calls_redis, w.condition(), w.block())
        };
        if let Some(why) = why {
            self.report(tok_pos(w.while_token()), "unbounded-loop", why.into());
        }
    }

    /// `repeat ... until cond`.
    pub fn repeat_loop(&mut self, r: &Repeat) {
        self.push_scope();
        self.block_inner(r.block());
        let before = self.redis_calls;
        self.eval(r.until());
        let calls_redis = self.redis_calls > before;
        self.pop_scope();
        let why = if constant(r.until()) == Some(false) {
            Some("`until false` never ends by its condition")
        } else {
            self.loop_problem(calls_redis, r.until(), r.block())
        };
        if let Some(why) = why {
            self.report(tok_pos(r.repeat_token()), "unbounded-loop", why.into());
        }
    }

    fn loop_problem(
        &self,
        calls_redis: bool,
        cond: &Expression,
        body: &Block,
    ) -> Option<&'static str> {
        if calls_redis {
            Some("the loop condition calls Redis: it runs until a collection is drained, however large")
        } else if never_changes(cond, body) {
            Some("nothing in the loop body changes its condition and it has no break or return")
        } else {
            None
        }
    }

    /// `for i = a, b[, s] do ... end`.
    pub fn numeric_for(&mut self, f: &NumericFor) {
        self.eval(f.start());
        let end = self.eval(f.end());
        if let Some(step) = f.step() {
            self.eval(step);
        }
        if end.has(Val::ARGV | Val::REPLY) {
            let from = if end.has(Val::ARGV) {
                "ARGV"
            } else {
                "a reply"
            };
            self.report(
                node_pos(f.end()),
                "unbounded-loop",
                format!("numeric for up to a value from {from} with no math.min clamp"),
            );
        }
        self.for_body(f.index_variable(), f.block());
    }
}
