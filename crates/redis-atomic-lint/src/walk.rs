//! The AST walk: scopes, the origin of every value ([`Val`]), and the code rules that need them
//! (globals, returns, loops; `redis.call` itself is in `calls.rs`).
//!
//! One pass, in source order. Locals are tracked per block; a value's flags are joined on
//! reassignment, so the analysis errs towards "might come from ARGV" rather than missing it.
//! A "unit" is what the server runs as one script: the file (a script) or one
//! `redis.register_function` callback (a library); flags and TTL rules are judged per unit.

use super::value::Val;
use full_moon::ast::{Block, Expression, FunctionBody, LastStmt, Parameter, Stmt, Var};
use full_moon::node::Node;
use full_moon::tokenizer::{TokenReference, TokenType};
use std::collections::{HashMap, HashSet};

/// A 1-based position in the parsed (expanded) text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pos {
    /// Line.
    pub line: usize,
    /// Column (characters).
    pub col: usize,
}

/// A finding before it is mapped back to a file.
#[derive(Clone, Debug)]
pub struct RawFinding {
    /// Where.
    pub pos: Pos,
    /// Rule id.
    pub rule: &'static str,
    /// What, specifically.
    pub message: String,
}

/// What one unit (script or registered function) does, for the rules judged at its end.
#[derive(Debug, Default)]
pub struct Unit {
    /// Function name (libraries) or empty (scripts).
    pub name: String,
    /// Declared flags; `None` when there is nothing to compare (no shebang, library top level).
    pub flags: Option<Vec<String>>,
    /// Where the unit starts.
    pub pos: Pos,
    /// Write commands called.
    pub writes: Vec<(Pos, String)>,
    /// Keys created by a write without an expiry: (key text, where, command).
    pub creates: Vec<(String, Pos, String)>,
    /// Keys given an expiry somewhere in the unit.
    pub ttl_keys: HashSet<String>,
    /// A command name was not a literal (what it does is unknown).
    pub dynamic: bool,
}

pub(super) struct Local {
    val: Val,
    /// `KEYS[n]` when the local holds that key: TTL rules match keys by this text.
    pub(super) key: Option<String>,
}

/// Globals Redis provides to scripts (Lua 5.1 base plus Redis' libraries).
const GLOBALS: &[&str] = &[
    "redis",
    "cjson",
    "cmsgpack",
    "bit",
    "struct",
    "math",
    "string",
    "table",
    "os",
    "tonumber",
    "tostring",
    "type",
    "pairs",
    "ipairs",
    "next",
    "select",
    "unpack",
    "error",
    "pcall",
    "xpcall",
    "assert",
    "rawget",
    "rawset",
    "rawequal",
    "setmetatable",
    "getmetatable",
    "_G",
    "_VERSION",
    "print",
    "loadstring",
    "coroutine",
    "gcinfo",
    "collectgarbage",
    "getfenv",
    "setfenv",
];

/// The walker state.
pub struct Walker {
    /// Findings so far.
    pub findings: Vec<RawFinding>,
    /// Units; index 0 is the file itself.
    pub units: Vec<Unit>,
    /// Current unit.
    pub unit: usize,
    /// Enclosing `if` blocks whose condition compares with an ARGV value (an ownership check).
    pub guards: usize,
    /// Set when an `==` against an ARGV value is evaluated (read by `if`).
    pub saw_argv_eq: bool,
    /// `redis.call`s evaluated so far (loops compare before/after their condition).
    pub redis_calls: usize,
    /// A Function library (no KEYS/ARGV globals; callbacks are units).
    pub library: bool,
    /// Functions assigned to a table field at a library's top level, not yet walked: a
    /// registration that names one walks it as its unit (`named.rs`).
    pub(super) held: Vec<(String, FunctionBody)>,
    scopes: Vec<HashMap<String, Local>>,
    /// Per function frame: whether its `return` is what the server returns.
    frames: Vec<bool>,
}

/// The identifier text of a name token.
pub fn name_of(tok: &TokenReference) -> &str {
    match tok.token().token_type() {
        TokenType::Identifier { identifier } => identifier.as_str(),
        _ => "",
    }
}

/// Position of a token.
pub fn tok_pos(tok: &TokenReference) -> Pos {
    let p = tok.token().start_position();
    Pos {
        line: p.line(),
        col: p.character(),
    }
}

/// Position of any node.
pub fn node_pos(node: &impl Node) -> Pos {
    node.start_position()
        .map(|p| Pos {
            line: p.line(),
            col: p.character(),
        })
        .unwrap_or_default()
}

impl Walker {
    /// A walker for a script (`library == false`, `flags` from its shebang) or a library.
    pub fn new(library: bool, flags: Option<Vec<String>>) -> Walker {
        Walker {
            findings: Vec::new(),
            units: vec![Unit {
                flags,
                pos: Pos { line: 1, col: 1 },
                ..Unit::default()
            }],
            unit: 0,
            guards: 0,
            saw_argv_eq: false,
            redis_calls: 0,
            library,
            held: Vec::new(),
            scopes: vec![HashMap::new()],
            frames: vec![!library],
        }
    }

    /// Records a finding.
    pub fn report(&mut self, pos: Pos, rule: &'static str, message: String) {
        self.findings.push(RawFinding { pos, rule, message });
    }

    /// The current unit.
    pub fn unit_mut(&mut self) -> &mut Unit {
        &mut self.units[self.unit]
    }

    fn bind(&mut self, name: &str, val: Val, key: Option<String>) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), Local { val, key });
        }
    }

    pub(super) fn local(&self, name: &str) -> Option<&Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// The value of a name without reporting anything.
    pub fn peek(&self, name: &str) -> Val {
        match self.local(name) {
            Some(l) => l.val,
            None if !self.library && name == "KEYS" => Val::KEYS_TABLE,
            None if !self.library && name == "ARGV" => Val::ARGV_TABLE,
            None => Val::NONE,
        }
    }

    /// The value of a name read in code: an unknown global is reported.
    pub(super) fn read_name(&mut self, tok: &TokenReference) -> Val {
        let name = name_of(tok);
        let known = self.local(name).is_some()
            || GLOBALS.contains(&name)
            || (!self.library && (name == "KEYS" || name == "ARGV"));
        if !known {
            self.report(
                tok_pos(tok),
                "undefined-global",
                format!("`{name}` is not a local and not a global Redis provides"),
            );
        }
        self.peek(name)
    }

    /// Walks a block in a new scope.
    pub fn block(&mut self, block: &Block) {
        self.scopes.push(HashMap::new());
        self.block_inner(block);
        self.scopes.pop();
    }

    /// Walks the whole chunk; a held function no registration named is walked at its end, as a
    /// plain function in the chunk's scope.
    pub fn chunk(&mut self, block: &Block) {
        self.scopes.push(HashMap::new());
        self.block_inner(block);
        for (_, body) in std::mem::take(&mut self.held) {
            self.function(&body, false);
        }
        self.scopes.pop();
    }

    /// Whether the walk is at a library's top level (outside every function).
    pub(super) fn library_top_level(&self) -> bool {
        self.library && self.frames.len() == 1
    }

    /// Walks a block in the current scope (`repeat ... until` sees the body's locals).
    pub fn block_inner(&mut self, block: &Block) {
        for stmt in block.stmts() {
            self.stmt(stmt);
        }
        if let Some(LastStmt::Return(ret)) = block.last_stmt() {
            let at_unit_root = self.frames.last().copied().unwrap_or(false);
            for expr in ret.returns().iter() {
                let val = self.eval(expr);
                if at_unit_root && val.has(Val::FLOAT) {
                    self.report(
                        node_pos(expr),
                        "float-return",
                        "returns a number that may be fractional; Redis truncates it to an integer"
                            .into(),
                    );
                }
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::LocalAssignment(la) => {
                let exprs: Vec<&Expression> = la.expressions().iter().collect();
                let vals: Vec<(Val, Option<String>)> = exprs
                    .iter()
                    .map(|e| (self.eval(e), self.key_text(e)))
                    .collect();
                let spill = match exprs.last() {
                    Some(Expression::FunctionCall(_)) => vals.last().map_or(Val::NONE, |v| v.0),
                    _ => Val::NONE,
                };
                for (i, name) in la.names().iter().enumerate() {
                    let (val, key) = vals.get(i).cloned().unwrap_or((spill, None));
                    self.bind(name_of(name), val, key);
                }
            }
            Stmt::Assignment(a) => self.assignment(a),
            Stmt::FunctionCall(call) => {
                self.suffixed(call.prefix(), call.suffixes());
            }
            Stmt::FunctionDeclaration(decl) => {
                let names: Vec<&TokenReference> = decl.name().names().iter().collect();
                if let Some(first) = names.first() {
                    if names.len() == 1 && decl.name().method_name().is_none() {
                        if self.local(name_of(first)).is_none() {
                            self.report(
                                tok_pos(first),
                                "global-write",
                                format!("`function {}` defines a global", name_of(first)),
                            );
                        }
                    } else {
                        self.read_name(first);
                    }
                }
                self.function(decl.body(), false);
            }
            Stmt::LocalFunction(lf) => {
                self.bind(name_of(lf.name()), Val::NONE, None);
                self.function(lf.body(), false);
            }
            Stmt::If(stmt) => {
                self.guarded(stmt.condition(), stmt.block());
                for elif in stmt.else_if().into_iter().flatten() {
                    self.guarded(elif.condition(), elif.block());
                }
                if let Some(block) = stmt.else_block() {
                    self.block(block);
                }
            }
            Stmt::While(w) => self.while_loop(w),
            Stmt::Repeat(r) => self.repeat_loop(r),
            Stmt::NumericFor(f) => self.numeric_for(f),
            Stmt::GenericFor(f) => {
                let mut val = Val::NONE;
                for e in f.expressions().iter() {
                    val = val | self.eval(e);
                }
                self.scopes.push(HashMap::new());
                for name in f.names().iter() {
                    self.bind(name_of(name), val.element(), None);
                }
                self.block_inner(f.block());
                self.scopes.pop();
            }
            Stmt::Do(d) => self.block(d.block()),
            _ => {}
        }
    }

    /// Binds a numeric `for` variable and walks the body (loop rules are in `loops.rs`).
    pub fn for_body(&mut self, var: &TokenReference, block: &Block) {
        self.scopes.push(HashMap::new());
        self.bind(name_of(var), Val::NONE, None);
        self.block_inner(block);
        self.scopes.pop();
    }

    /// Pushes a scope for `repeat` bodies.
    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    /// Pops a scope.
    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn assignment(&mut self, a: &full_moon::ast::Assignment) {
        if self.hold(a) {
            return;
        }
        let vals: Vec<Val> = a.expressions().iter().map(|e| self.eval(e)).collect();
        for (i, var) in a.variables().iter().enumerate() {
            let val = vals.get(i).or(vals.last()).copied().unwrap_or(Val::NONE);
            match var {
                Var::Name(tok) => {
                    let name = name_of(tok);
                    match self.scopes.iter_mut().rev().find_map(|s| s.get_mut(name)) {
                        Some(local) => {
                            local.val = local.val | val;
                            local.key = None;
                        }
                        None => self.report(
                            tok_pos(tok),
                            "global-write",
                            format!("assignment to undeclared `{name}` creates a global"),
                        ),
                    }
                }
                Var::Expression(ve) => {
                    self.suffixed(ve.prefix(), ve.suffixes());
                }
                _ => {}
            }
        }
    }

    fn guarded(&mut self, cond: &Expression, block: &Block) {
        self.saw_argv_eq = false;
        self.eval(cond);
        let guard = std::mem::take(&mut self.saw_argv_eq);
        self.guards += usize::from(guard);
        self.block(block);
        self.guards -= usize::from(guard);
    }

    /// Walks a function body: a callback of `register_function` is a unit root.
    pub fn function(&mut self, body: &FunctionBody, callback: bool) {
        self.scopes.push(HashMap::new());
        self.frames.push(callback);
        let guards = std::mem::take(&mut self.guards);
        for (i, param) in body.parameters().iter().enumerate() {
            if let Parameter::Name(tok) = param {
                let val = match (callback, i) {
                    (true, 0) => Val::KEYS_TABLE,
                    (true, 1) => Val::ARGV_TABLE,
                    _ => Val::NONE,
                };
                self.bind(name_of(tok), val, None);
            }
        }
        self.block(body.block());
        self.guards = guards;
        self.frames.pop();
        self.scopes.pop();
    }

    /// Judges each unit's flags and TTLs; returns every finding.
    pub fn finish(mut self) -> Vec<RawFinding> {
        for unit in std::mem::take(&mut self.units) {
            self.judge(unit);
        }
        self.findings
    }

    fn judge(&mut self, unit: Unit) {
        let what = if unit.name.is_empty() {
            "the script".to_string()
        } else {
            format!("function `{}`", unit.name)
        };
        if let Some(flags) = &unit.flags {
            if flags.iter().any(|f| f == "no-writes") {
                for (pos, cmd) in &unit.writes {
                    self.report(
                        *pos,
                        "writes-under-no-writes",
                        format!("{what} is flagged no-writes but calls {cmd}"),
                    );
                }
            } else if unit.writes.is_empty() && !unit.dynamic {
                self.report(
                    unit.pos,
                    "missing-no-writes",
                    format!("{what} never writes but is not flagged no-writes"),
                );
            }
        }
        for (key, pos, cmd) in &unit.creates {
            if !unit.ttl_keys.contains(key) {
                self.report(
                    *pos,
                    "write-without-ttl",
                    format!("{cmd} {key} may create a key that never expires (no expiry set on it in {what})"),
                );
            }
        }
    }
}
