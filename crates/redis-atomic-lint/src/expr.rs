//! Expressions: the origin flags ([`Val`]) of every expression, walking calls and functions
//! inside it so their rules run too.

use super::value::Val;
use super::walk::{name_of, node_pos, Walker};
use full_moon::ast::{
    Call, Expression, Field, FunctionArgs, Index, Prefix, Suffix, TableConstructor, Var,
};
use full_moon::tokenizer::{TokenReference, TokenType};

impl Walker {
    /// The origin flags of an expression (walking it: calls inside are analysed).
    pub fn eval(&mut self, expr: &Expression) -> Val {
        use full_moon::ast::{BinOp, UnOp};
        match expr {
            Expression::BinaryOperator { lhs, binop, rhs } => {
                let (l, r) = (self.eval(lhs), self.eval(rhs));
                match binop {
                    BinOp::TwoDots(_) => Val::BUILT | ((l | r) & (Val::ARGV | Val::REPLY)),
                    BinOp::Slash(_) | BinOp::Caret(_) => Val::FLOAT | arithmetic(l, r),
                    BinOp::Plus(_) | BinOp::Minus(_) | BinOp::Star(_) | BinOp::Percent(_) => {
                        arithmetic(l, r)
                    }
                    BinOp::TwoEqual(_) => {
                        self.saw_argv_eq |= (l | r).has(Val::ARGV);
                        Val::NONE
                    }
                    BinOp::And(_) | BinOp::Or(_) => l | r,
                    _ => Val::NONE,
                }
            }
            Expression::Parentheses { expression, .. } => self.eval(expression),
            Expression::UnaryOperator { unop, expression } => {
                let v = self.eval(expression);
                // `#reply` is as large as the read that produced it: an unbounded read is
                // reported where it happens, so the length itself is not an origin.
                match unop {
                    UnOp::Minus(_) => v.numeric(),
                    _ => Val::NONE,
                }
            }
            Expression::Function(f) => {
                self.function(f.body(), false);
                Val::NONE
            }
            Expression::FunctionCall(call) => self.suffixed(call.prefix(), call.suffixes()),
            Expression::TableConstructor(t) => self.table(t),
            Expression::Number(tok) => number(tok),
            Expression::String(_) => Val::LITERAL,
            Expression::Var(Var::Name(tok)) => self.read_name(tok),
            Expression::Var(Var::Expression(ve)) => self.suffixed(ve.prefix(), ve.suffixes()),
            _ => Val::NONE,
        }
    }

    /// A table constructor: the join of its values (so a float inside a returned table counts).
    pub fn table(&mut self, t: &TableConstructor) -> Val {
        let mut val = Val::NONE;
        for field in t.fields().iter() {
            match field {
                Field::ExpressionKey { key, value, .. } => {
                    self.eval(key);
                    val = val | self.eval(value);
                }
                Field::NameKey { value, .. } => val = val | self.eval(value),
                Field::NoKey(value) => val = val | self.eval(value),
                _ => {}
            }
        }
        val.without(Val::LITERAL | Val::KEYS_TABLE | Val::ARGV_TABLE)
    }

    /// `prefix` followed by `.name`, `[expr]`, `(args)` and `:m(args)` suffixes.
    pub fn suffixed<'a>(
        &mut self,
        prefix: &Prefix,
        suffixes: impl Iterator<Item = &'a Suffix>,
    ) -> Val {
        let pos = node_pos(prefix);
        let (mut val, mut path) = match prefix {
            Prefix::Name(tok) => (self.read_name(tok), Some(name_of(tok).to_string())),
            Prefix::Expression(e) => (self.eval(e), None),
            _ => (Val::NONE, None),
        };
        for suffix in suffixes {
            match suffix {
                Suffix::Index(Index::Dot { name, .. }) => {
                    path = path.map(|p| format!("{p}.{}", name_of(name)));
                    val = val.element();
                }
                Suffix::Index(Index::Brackets { expression, .. }) => {
                    self.eval(expression);
                    path = None;
                    val = val.element();
                }
                Suffix::Call(Call::AnonymousCall(args)) => {
                    val = self.call(path.take().as_deref(), args, pos);
                }
                Suffix::Call(Call::MethodCall(mc)) => {
                    self.args(mc.args());
                    path = None;
                    val = val & (Val::ARGV | Val::REPLY | Val::BUILT);
                }
                _ => {}
            }
        }
        val
    }

    /// Evaluates call arguments: the expressions (for `redis.call`'s literal checks) and values.
    pub fn args<'a>(&mut self, args: &'a FunctionArgs) -> (Vec<&'a Expression>, Vec<Val>) {
        match args {
            FunctionArgs::Parentheses { arguments, .. } => {
                let exprs: Vec<&Expression> = arguments.iter().collect();
                let vals = exprs.iter().map(|e| self.eval(e)).collect();
                (exprs, vals)
            }
            FunctionArgs::String(_) => (Vec::new(), vec![Val::LITERAL]),
            FunctionArgs::TableConstructor(t) => (Vec::new(), vec![self.table(t)]),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// `KEYS[n]` (with the key table's name normalised) when `expr` denotes a KEYS element.
    pub fn key_text(&self, expr: &Expression) -> Option<String> {
        match expr {
            Expression::Var(Var::Name(tok)) => self.local(name_of(tok)).and_then(|l| l.key.clone()),
            Expression::Var(Var::Expression(ve)) => {
                let Prefix::Name(tok) = ve.prefix() else {
                    return None;
                };
                let suffixes: Vec<&Suffix> = ve.suffixes().collect();
                match (self.peek(name_of(tok)).has(Val::KEYS_TABLE), &suffixes[..]) {
                    (true, [Suffix::Index(Index::Brackets { expression, .. })]) => {
                        let index: String = expression
                            .to_string()
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .collect();
                        Some(format!("KEYS[{index}]"))
                    }
                    _ => None,
                }
            }
            Expression::Parentheses { expression, .. } => self.key_text(expression),
            _ => None,
        }
    }
}

/// Arithmetic keeps origins; the result is a constant only when both sides are.
fn arithmetic(l: Val, r: Val) -> Val {
    let v = (l | r).numeric();
    if v.has(Val::ARGV | Val::REPLY) {
        v.without(Val::CONST)
    } else {
        v
    }
}

fn number(tok: &TokenReference) -> Val {
    let text = match tok.token().token_type() {
        TokenType::Number { text } => text.as_str(),
        _ => "",
    };
    let fractional = !text.starts_with("0x")
        && !text.starts_with("0X")
        && text.parse::<f64>().is_ok_and(|n| n.fract() != 0.0);
    if fractional {
        Val::CONST | Val::FLOAT
    } else {
        Val::CONST
    }
}
