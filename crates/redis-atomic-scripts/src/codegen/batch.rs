//! Batches: several decisions of batchable scripts (`--- batch: yes`) run one after another in
//! one server call, generated from the same headers and bodies as each script's own call.
//!
//! Why: a script call costs the server a fixed overhead (reading and parsing the command,
//! finding the script, setting up `KEYS` and `ARGV`, the call itself, writing the reply) on top
//! of what its body does; for a short decision that overhead is a third of the cost. A client
//! that has several decisions waiting for the same node sends them as one call of a batch entry
//! point, which runs each body in order and answers one reply per decision.
//!
//! Every batchable script's flags decide its *group*: the batch entry point of a group carries
//! exactly those shebang flags, so the server admits a batch exactly when it would admit each of
//! its decisions alone (`OOM` before a writing batch, `no-writes` batches on replicas). Groups are
//! named by their flags: `_batch` (none), `_batch_no_writes`, `_batch_allow_oom`, ... (a leading
//! `_`, so no script name can collide with one). Each group has two forms:
//!
//! * a script of its own for `EVALSHA` ([`eval_source`]), whose bodies are inlined;
//! * a function of the Function library (`<prefix>_batch…`, [`library_part`]), which calls the
//!   very functions registered for the scripts' own `FCALL`s.
//!
//! The call: `KEYS` are every decision's keys in order; `ARGV` is a list of runs, each
//! `<script name> <count>` followed by `count` decisions' arguments in order, each preceded by
//! `<key count> <argument count>` when the script's header lists are variadic (`name...`). The
//! reply is an array with one element per decision, each exactly what that decision's own call
//! would have answered: its reply value; `nil` (and `false`) as nil, never a hole in the array;
//! an error reply as an error element — one the body returned, or one it raised (a failed
//! `redis.call`, a Lua runtime error), caught per decision with `xpcall` and answered with the
//! same code a lone call answers (the text of a raised error lacks the `script: …, on
//! @user_script:N.` suffix a lone call appends). One decision's error never stops the others:
//! what it wrote before failing stands, as it would alone. A malformed call (an unknown name,
//! counts that do not fit) answers one `ERR redis-atomic: malformed batch …` error for the whole
//! call; the library never sends one.
//!
//! Each decision gets tables of its own for `KEYS` and `ARGV`: for a script with fixed counts the
//! same two tables are refilled at every declared index before each decision (cheaper than new
//! tables), which is exact because such a body only ever indexes them by literal numbers (checked
//! at build, `check::check_batch`); a variadic script's decisions get fresh tables.

use crate::header::KNOWN_FLAGS;
use crate::load::ScriptFile;
use std::fmt::Write as _;

/// Most keys plus arguments one decision may carry inside a batch: a variadic decision's lists
/// are unpacked onto Lua's stack (at most 8 000 slots). A larger decision goes alone.
pub const MAX_DECISION_ITEMS: usize = 4096;

/// The batchable scripts that share one set of shebang flags, and so one batch entry point.
#[derive(Clone, Debug)]
pub struct BatchGroup<'a> {
    /// `_batch`, `_batch_no_writes`, ...: the entry point's name, from its flags.
    pub name: String,
    /// The shebang flags of every script in the group, in [`KNOWN_FLAGS`] order.
    pub flags: Vec<String>,
    /// The scripts, in name order.
    pub scripts: Vec<&'a ScriptFile>,
}

impl BatchGroup<'_> {
    /// The Rust name of the group's definition: `DEFAULT` for no flags, else the flags in upper
    /// snake case (`NO_WRITES`).
    pub fn static_name(&self) -> String {
        match self.name.strip_prefix("_batch_") {
            Some(flags) => flags.to_uppercase(),
            None => "DEFAULT".to_string(),
        }
    }
}

/// The flags of `s` in [`KNOWN_FLAGS`] order (the order a header lists them in does not make
/// another group).
fn canonical_flags(s: &ScriptFile) -> Vec<String> {
    KNOWN_FLAGS
        .iter()
        .filter(|f| s.header.flags.iter().any(|g| g == *f))
        .map(|f| f.to_string())
        .collect()
}

/// The batch groups of `scripts`: every `--- batch: yes` script, grouped by flags (none when no
/// script is batchable).
pub fn groups(scripts: &[ScriptFile]) -> Vec<BatchGroup<'_>> {
    let mut groups: Vec<BatchGroup<'_>> = Vec::new();
    for s in scripts.iter().filter(|s| s.header.batch) {
        let flags = canonical_flags(s);
        match groups.iter_mut().find(|g| g.flags == flags) {
            Some(g) => g.scripts.push(s),
            None => {
                let mut name = String::from("_batch");
                for f in &flags {
                    let _ = write!(name, "_{}", f.replace('-', "_"));
                }
                groups.push(BatchGroup {
                    name,
                    flags,
                    scripts: vec![s],
                });
            }
        }
    }
    groups.sort_by(|a, b| a.name.cmp(&b.name));
    groups
}

/// What every entry point shares: the decision being run (`__ra_cf` on `__ra_ck`, `__ra_ca`,
/// upvalues, so `xpcall` needs no closure per decision), the error handler that turns a raised
/// error into the error reply a lone call would answer, and the refusal of a malformed call.
const RUNTIME: &str = "local __ra_ck, __ra_ca, __ra_cf
local function __ra_current() return __ra_cf(__ra_ck, __ra_ca) end
local function __ra_failed(e)
  if type(e) == 'table' then
    if type(e.err) == 'string' then return {err = e.err} end
    return {err = 'ERR unknown error'}
  end
  return {err = 'ERR ' .. tostring(e)}
end
local function __ra_malformed(at)
  return redis.error_reply('ERR redis-atomic: malformed batch at argument ' .. at)
end
";

/// One decision: run, turn `nil` into `false` (nil in an array would end it), store.
const DECIDE: &str = "        local _, r = xpcall(__ra_current, __ra_failed)
        if r == nil then r = false end
        i = i + 1
        out[i] = r
";

/// `t[1], t[2], ... = src[at], src[at + 1], ...` for `n` entries (nothing when `n` is 0).
fn refill(table: &str, src: &str, at: &str, n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    let targets: Vec<String> = (1..=n).map(|i| format!("{table}[{i}]")).collect();
    let sources: Vec<String> = (0..n)
        .map(|i| match i {
            0 => format!("{src}[{at}]"),
            i => format!("{src}[{at} + {i}]"),
        })
        .collect();
    format!("        {} = {}\n", targets.join(", "), sources.join(", "))
}

/// The branch of the dispatch loop for one script: `c` decisions of it, from `k` (keys) and `a`
/// (arguments) on. `body` is how the script's function is reached.
fn branch(s: &ScriptFile, body: &str) -> String {
    let h = &s.header;
    if h.variadic_keys() || h.variadic_args() {
        let (min_keys, min_args) = (fixed(&h.keys), fixed(&h.args));
        return format!(
            "      __ra_cf = {body}
      for _ = 1, c do
        local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
        if not nk or not na or nk % 1 ~= 0 or na % 1 ~= 0 or nk < {min_keys} or na < {min_args}
          or nk + na > {max} or k + nk - 1 > nkeys or a + 1 + na > n then
          return __ra_malformed(a)
        end
        __ra_ck, __ra_ca = {{unpack(KEYS, k, k + nk - 1)}}, {{unpack(ARGV, a + 2, a + 1 + na)}}
{DECIDE}        k, a = k + nk, a + 2 + na
      end
",
            max = MAX_DECISION_ITEMS,
        );
    }
    let (nk, na) = (h.keys.len(), h.args.len());
    format!(
        "      if k + c * {nk} - 1 > nkeys or a + c * {na} - 1 > n then return __ra_malformed(a) end
      __ra_cf, __ra_ck, __ra_ca = {body}, {{}}, {{}}
      for _ = 1, c do
{keys}{args}{DECIDE}        k, a = k + {nk}, a + {na}
      end
",
        keys = refill("__ra_ck", "KEYS", "k", nk),
        args = refill("__ra_ca", "ARGV", "a", na),
    )
}

/// Entries of a header list before its variadic `name...` (the least a call passes).
fn fixed(list: &[String]) -> usize {
    list.iter().filter(|n| !n.ends_with("...")).count()
}

/// The entry point of `group` as a local Lua function `fn_name(KEYS, ARGV)`; `body(s)` is the
/// expression that yields script `s`'s function.
fn entry_point(
    group: &BatchGroup<'_>,
    fn_name: &str,
    body: &dyn Fn(&ScriptFile) -> String,
) -> String {
    let mut out = format!(
        "local function {fn_name}(KEYS, ARGV)
  local out, i, k, a, n, nkeys = {{}}, 0, 1, 1, #ARGV, #KEYS
  while a <= n do
    local name, c = ARGV[a], tonumber(ARGV[a + 1])
    if not c or c < 1 or c % 1 ~= 0 then return __ra_malformed(a + 1) end
    a = a + 2
"
    );
    for (i, s) in group.scripts.iter().enumerate() {
        let keyword = if i == 0 { "if" } else { "elseif" };
        let _ = write!(
            out,
            "    {keyword} name == '{}' then\n{}",
            s.name,
            branch(s, &body(s))
        );
    }
    out.push_str(
        "    else
      return __ra_malformed(a - 2)
    end
  end
  __ra_ck, __ra_ca, __ra_cf = nil, nil, nil
  if k ~= nkeys + 1 then return __ra_malformed(a) end
  return out
end
",
    );
    out
}

/// The script `EVALSHA` runs for `group`: its flags, every body inlined as a function.
pub fn eval_source(group: &BatchGroup<'_>) -> String {
    let mut out = String::from("#!lua");
    if !group.flags.is_empty() {
        let _ = write!(out, " flags={}", group.flags.join(","));
    }
    out.push('\n');
    out.push_str(RUNTIME);
    let inline = |s: &ScriptFile| format!("function(KEYS, ARGV)\n{}end", s.function_body());
    out.push_str(&entry_point(group, "__ra_run", &inline));
    out.push_str("return __ra_run(KEYS, ARGV)\n");
    out
}

/// The name of a batchable script's function in the library's table (`__ra_F['name']`): the
/// one function both its own `FCALL` and the batch entry points call.
pub(super) fn library_function(s: &ScriptFile) -> String {
    format!("__ra_F['{}']", s.name)
}

/// What a library with batchable scripts appends after registering them: the shared runtime,
/// then each group's entry point, registered as `<prefix>_batch…` with the group's flags.
pub(super) fn library_part(groups: &[BatchGroup<'_>], function_prefix: &str) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("\n{RUNTIME}");
    for g in groups {
        let fn_name = format!("__ra{}", g.name);
        out.push_str(&entry_point(g, &fn_name, &library_function));
        let flags: Vec<String> = g.flags.iter().map(|f| format!("'{f}'")).collect();
        let _ = writeln!(
            out,
            "redis.register_function{{function_name='{function_prefix}{name}', flags={{{flags}}}, callback={fn_name}}}",
            name = g.name,
            flags = flags.join(", "),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_source;
    use std::path::Path;

    fn script(name: &str, shebang: &str, keys: &str, args: &str) -> ScriptFile {
        // Uses every declared key and argument (the variadic ones through their count).
        let uses = |list: &str, table: &str| -> String {
            let names: Vec<&str> = list.split(' ').collect();
            let mut out: Vec<String> = (1..=names.len()).map(|i| format!("{table}[{i}]")).collect();
            if list.ends_with("...") {
                out.push(format!("#{table}"));
            }
            out.join(" .. ")
        };
        let text = format!(
            "{shebang}\n--- summary: s\n--- invariant: i\n--- keys: {keys}\n--- args: {args}\n\
             --- returns: {{'ok', n}}\n--- retry: unsafe\n--- version: 1\n--- batch: yes\n\
             redis.call('SET', {k}, {a})\nreturn {{'ok', 1}}\n",
            k = uses(keys, "KEYS"),
            a = uses(args, "ARGV"),
        );
        parse_source(Path::new("t.lua"), name, &text, &mut |_| Ok(None))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Scripts group by their flags in canonical order; names follow the flags; a script
    /// without `batch: yes` is in no group.
    #[test]
    fn groups_by_flags() {
        let a = script("a", "#!lua", "k", "n");
        let b = script("b", "#!lua flags=allow-stale,allow-oom", "k", "n");
        let c = script("c", "#!lua flags=allow-oom,allow-stale", "k", "n");
        let mut d = script("d", "#!lua", "k", "n");
        d.header.batch = false;
        let all = [a, b, c, d];
        let g = groups(&all);
        let names: Vec<(&str, usize)> = g
            .iter()
            .map(|g| (g.name.as_str(), g.scripts.len()))
            .collect();
        assert_eq!(names, [("_batch", 1), ("_batch_allow_oom_allow_stale", 2)]);
        assert_eq!(g[0].static_name(), "DEFAULT");
        assert_eq!(g[1].static_name(), "ALLOW_OOM_ALLOW_STALE");
        assert_eq!(g[1].flags, ["allow-oom", "allow-stale"]);
    }

    /// The EVAL form: the group's flags in the shebang, one branch per script, fixed tables
    /// refilled at each declared index, variadic ones unpacked.
    #[test]
    fn eval_form() {
        let fixed = script("fix", "#!lua flags=allow-oom", "a b", "x y z");
        let var = script("var", "#!lua flags=allow-oom", "a more...", "x");
        let all = [fixed, var];
        let src = eval_source(&groups(&all)[0]);
        assert!(src.starts_with("#!lua flags=allow-oom\n"), "{src}");
        for expected in [
            "if name == 'fix' then",
            "__ra_ck[1], __ra_ck[2] = KEYS[k], KEYS[k + 1]",
            "__ra_ca[1], __ra_ca[2], __ra_ca[3] = ARGV[a], ARGV[a + 1], ARGV[a + 2]",
            "k, a = k + 2, a + 3",
            "elseif name == 'var' then",
            "nk < 1 or na < 1",
            "{unpack(KEYS, k, k + nk - 1)}",
            "return __ra_run(KEYS, ARGV)",
        ] {
            assert!(src.contains(expected), "{expected} missing from:\n{src}");
        }
    }
}
