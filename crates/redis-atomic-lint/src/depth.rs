//! How deep a source nests, measured by a token scan before the parser sees it.
//!
//! Why before: `full_moon` parses recursively and builds a tree as deep as the source nests;
//! the walk and the tree's drop recurse as deep again. 2 000 `(` or 20 000 nested `if` overflow
//! any thread's stack — an abort, not an error. This scan is one pass over the bytes with a
//! lexer just good enough to skip strings and comments (Lua 5.1's rules), and needs no stack.
//!
//! What it bounds:
//! * **nesting** — open brackets `( { [` and blocks (`function`, `do`, `if`, `repeat` up to
//!   their `end` / `until`): at most [`MAX_NESTING`], which is Redis' own limit: its Lua refuses
//!   a script 200 syntax levels deep with "chunk has too many syntax levels", so nothing
//!   refused here could run on a server.
//! * **levels** — nesting plus the operators chained in the expressions along the way (each
//!   binary or unary operator is one more level of the parser's tree, `a + b + c + ...`
//!   included): at most [`MAX_LEVELS`]. Redis refuses unary and right-associative chains
//!   (`not not ...`, `..`, `^`) past 200 levels too, but runs long `+` or `and` chains (its
//!   parser loops over same-priority operators); 5 000 is far above anything written by hand.
//!
//! The scan errs towards counting more (every `-` is an operator, a statement boundary without
//! `=`, `,`, `;` or a keyword does not end a chain), never fewer: it must not pass a source the
//! parser would find deeper. [`super::STACK_BYTES`] is sized for the worst source it passes.

/// Deepest nesting of blocks and brackets accepted: Redis' Lua (`LUAI_MAXCCALLS`) refuses 200.
pub const MAX_NESTING: usize = 200;

/// Most parser levels (nesting plus chained operators) accepted.
pub const MAX_LEVELS: usize = 5_000;

/// A source nested deeper than the bounds: where (1-based line of the expanded text) and why.
#[derive(Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// Line where the bound was passed.
    pub line: usize,
    /// One line saying which bound.
    pub message: String,
}

/// Checks that `text` nests within [`MAX_NESTING`] and [`MAX_LEVELS`].
pub fn check(text: &str) -> Result<(), TooDeep> {
    let mut scan = Scan {
        runs: vec![0],
        chained: 0,
        line: 1,
    };
    let b = text.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'#') {
        i = skip_line(b, i);
    }
    while i < b.len() {
        let c = b[i];
        i = match c {
            b'\n' => {
                scan.line += 1;
                i + 1
            }
            b'-' if b.get(i + 1) == Some(&b'-') => comment(b, i + 2, &mut scan.line),
            b'[' if long_open(b, i).is_some() => long(b, i, &mut scan.line),
            b'\'' | b'"' => string(b, i, &mut scan.line),
            b'0'..=b'9' => number(b, i),
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => number(b, i),
            b'.' => dots(b, i, &mut scan)?,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => word(b, i, &mut scan)?,
            b'(' | b'{' | b'[' => {
                scan.open()?;
                i + 1
            }
            b')' | b'}' | b']' => {
                scan.close();
                i + 1
            }
            b',' | b';' => {
                scan.separator();
                i + 1
            }
            b'=' if b.get(i + 1) == Some(&b'=') => {
                scan.op()?;
                i + 2
            }
            b'=' => {
                scan.separator();
                i + 1
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'#' | b'<' | b'>' | b'~' => {
                scan.op()?;
                i + if b.get(i + 1) == Some(&b'=') { 2 } else { 1 }
            }
            _ => i + 1,
        };
    }
    Ok(())
}

/// The nesting so far: one chain-length counter per open level.
struct Scan {
    /// Operators chained so far in the current expression of each open level.
    runs: Vec<usize>,
    /// Sum of `runs`.
    chained: usize,
    line: usize,
}

impl Scan {
    fn depth(&self) -> usize {
        self.runs.len() - 1
    }

    fn open(&mut self) -> Result<(), TooDeep> {
        self.runs.push(0);
        if self.depth() > MAX_NESTING {
            return Err(self.too_deep(format!(
                "nested more than {MAX_NESTING} blocks or brackets deep: Redis refuses it \
                 (\"chunk has too many syntax levels\")"
            )));
        }
        self.within_levels()
    }

    fn close(&mut self) {
        if self.runs.len() > 1 {
            self.chained -= self.runs.pop().unwrap_or(0);
        }
    }

    fn op(&mut self) -> Result<(), TooDeep> {
        if let Some(run) = self.runs.last_mut() {
            *run += 1;
            self.chained += 1;
        }
        self.within_levels()
    }

    fn separator(&mut self) {
        if let Some(run) = self.runs.last_mut() {
            self.chained -= *run;
            *run = 0;
        }
    }

    fn within_levels(&self) -> Result<(), TooDeep> {
        if self.depth() + self.chained > MAX_LEVELS {
            return Err(self.too_deep(format!(
                "an expression nested and chained more than {MAX_LEVELS} levels deep: \
                 too deep to lint (split it)"
            )));
        }
        Ok(())
    }

    fn too_deep(&self, message: String) -> TooDeep {
        TooDeep {
            line: self.line,
            message,
        }
    }
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |n| i + n)
}

/// After `--`: a long comment `--[==[ ... ]==]` or the rest of the line.
fn comment(b: &[u8], i: usize, line: &mut usize) -> usize {
    if long_open(b, i).is_some() {
        long(b, i, line)
    } else {
        skip_line(b, i)
    }
}

/// The level (number of `=`) of a long bracket `[==[` opening at `i`.
fn long_open(b: &[u8], i: usize) -> Option<usize> {
    let eqs = b.get(i + 1..)?.iter().take_while(|&&c| c == b'=').count();
    (b.get(i) == Some(&b'[') && b.get(i + 1 + eqs) == Some(&b'[')).then_some(eqs)
}

/// Skips a long string or comment opening at `i`; an unclosed one runs to the end.
fn long(b: &[u8], i: usize, line: &mut usize) -> usize {
    let eqs = long_open(b, i).unwrap_or(0);
    let mut j = i + eqs + 2;
    while j < b.len() {
        match b[j] {
            b'\n' => *line += 1,
            b']' if b.get(j + 1 + eqs) == Some(&b']')
                && b[j + 1..j + 1 + eqs].iter().all(|&c| c == b'=') =>
            {
                return j + eqs + 2;
            }
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// Skips a quoted string opening at `i` (escapes skip one byte; a raw newline ends it, as an
/// error the parser reports).
fn string(b: &[u8], i: usize, line: &mut usize) -> usize {
    let quote = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => {
                if b.get(j + 1) == Some(&b'\n') {
                    *line += 1;
                }
                j += 2;
                continue;
            }
            b'\n' => return j,
            c if c == quote => return j + 1,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// Skips a numeral as Lua 5.1 reads one: digits and dots, an exponent sign, then word bytes.
fn number(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
        i += 1;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
    }
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    i
}

/// `.` (a field), `..` (an operator) or `...` (varargs).
fn dots(b: &[u8], i: usize, scan: &mut Scan) -> Result<usize, TooDeep> {
    let n = b[i..].iter().take(3).take_while(|&&c| c == b'.').count();
    if n == 2 {
        scan.op()?;
    }
    Ok(i + n)
}

/// A name or keyword: blocks open and close, `and`/`or`/`not` chain, other keywords end a chain.
fn word(b: &[u8], i: usize, scan: &mut Scan) -> Result<usize, TooDeep> {
    let len = b[i..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    match &b[i..i + len] {
        b"function" | b"do" | b"if" | b"repeat" => scan.open()?,
        b"end" | b"until" => scan.close(),
        b"and" | b"or" | b"not" => scan.op()?,
        b"break" | b"else" | b"elseif" | b"for" | b"in" | b"local" | b"return" | b"then"
        | b"while" => scan.separator(),
        _ => {}
    }
    Ok(i + len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text is an answer, never a panic (unclosed strings, brackets and comments
        /// included).
        #[test]
        fn never_panics(text in "(?s).{0,200}") {
            let _ = check(&text);
        }

        /// Soups of Lua's own symbols are answered too.
        #[test]
        fn never_panics_on_lua_symbols(text in "[-\\[\\]=(){}'\"\\\\.#~<>+*/%^,;\n a-z0-9]{0,200}") {
            let _ = check(&text);
        }
    }

    fn depth_error(text: &str) -> Option<usize> {
        check(text).err().map(|e| e.line)
    }

    /// Brackets and blocks nest up to Redis' own limit; one more is refused on its line.
    #[test]
    fn nesting_is_bounded_like_redis() {
        let ok = format!("return {}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(check(&ok), Ok(()));
        let deep = format!("return {}1{}", "(".repeat(201), ")".repeat(201));
        assert_eq!(depth_error(&deep), Some(1));
        let ifs = "if x then\n".repeat(20_000) + &"end\n".repeat(20_000);
        assert_eq!(depth_error(&ifs), Some(201));
        let funcs = "local f = function() return ".repeat(300);
        assert!(check(&funcs).is_err());
    }

    /// Closed levels do not add up: 10 000 blocks one after another are fine.
    #[test]
    fn siblings_do_not_nest() {
        let flat = "if x then y = (1) end\n".repeat(10_000);
        assert_eq!(check(&flat), Ok(()));
    }

    /// Operator chains count as levels; separators (`=`, `,`, keywords) end a chain.
    #[test]
    fn chains_are_bounded() {
        let long = format!("return {}", vec!["1"; MAX_LEVELS + 2].join("+"));
        assert_eq!(depth_error(&long), Some(1));
        let nots = format!("return {}x", "not ".repeat(MAX_LEVELS + 1));
        assert!(check(&nots).is_err());
        let statements = "x = 1 + 2\n".repeat(MAX_LEVELS);
        assert_eq!(check(&statements), Ok(()));
        let args = format!("f({})", vec!["a + b"; MAX_LEVELS].join(", "));
        assert_eq!(check(&args), Ok(()));
    }

    /// Brackets and keywords inside strings, long strings and comments do not count; lines are
    /// counted through them.
    #[test]
    fn strings_and_comments_are_skipped() {
        let noise = "'((((' \"{{\\\"{{\" [==[ (((\n]] ]==] --[[ ((((\n ]] -- ((((\n";
        let text = noise.repeat(1_000) + &"(".repeat(201);
        assert_eq!(depth_error(&text), Some(3_001));
        assert_eq!(
            check("#!lua ((((((\nreturn 1e-5 - 0x1e - 1..2 ... a.b"),
            Ok(())
        );
    }
}
