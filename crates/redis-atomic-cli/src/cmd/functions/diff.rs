//! A line diff for `functions diff` when a node holds different code under our library name:
//! the longest common subsequence of lines, printed as `-`/`+` lines with their line numbers.
//! Libraries are a few hundred lines, so the quadratic table is small.

/// `-N: line` for lines only in `old`, `+N: line` for lines only in `new`, in order.
pub fn line_diff(old: &str, new: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("+{}: {}", j + 1, b[j]));
            j += 1;
        } else {
            out.push(format!("-{}: {}", i + 1, a[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only changed lines are listed, with the side and line number they belong to.
    #[test]
    fn changed_lines_only() {
        assert_eq!(
            line_diff("a\nb\nc\n", "a\nB\nc\nd\n"),
            vec!["+2: B", "-2: b", "+4: d"]
        );
        assert!(line_diff("x\n", "x\n").is_empty());
    }
}
