//! The Lua 5.1 semantics a script's decision depends on, reproduced exactly: `tonumber` (C's
//! `strtod`, hexadecimal, surrounding spaces, cut at a NUL), arithmetic on doubles,
//! `string.format('%d')` and a number turned into a reply (a C cast to `long long`), and
//! `string.format('%.0f')`. The natives compute in `f64` in the scripts' order of operations, so
//! every result is the script's bit for bit, including on inputs no client sends.

/// Lua's `tonumber(s)` (base 10): `luaO_str2d` over the bytes up to the first NUL.
pub fn tonumber(s: &[u8]) -> Option<f64> {
    // The common case without a copy: up to 15 plain digits are below 2^53, where strtod's
    // value is the integer itself.
    if !s.is_empty() && s.len() <= 15 && s.iter().all(u8::is_ascii_digit) {
        return Some(s.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64);
    }
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let mut text = Vec::with_capacity(end + 1);
    text.extend_from_slice(&s[..end]);
    text.push(0);
    let start = text.as_ptr().cast::<libc::c_char>();
    let mut stop: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `text` is NUL-terminated; strtod/strtoul leave `stop` inside it.
    let (mut value, mut at) = unsafe { (libc::strtod(start, &mut stop), stop.offset_from(start)) };
    if at == 0 {
        return None;
    }
    let pos = |at: isize| {
        text.get(usize::try_from(at).unwrap_or(0))
            .copied()
            .unwrap_or(0)
    };
    if matches!(pos(at), b'x' | b'X') {
        // SAFETY: as above.
        unsafe {
            value = libc::strtoul(start, &mut stop, 16) as f64;
            at = stop.offset_from(start);
        }
    }
    // C's isspace: the ASCII whitespace plus the vertical tab.
    while pos(at).is_ascii_whitespace() || pos(at) == 0x0b {
        at += 1;
    }
    (pos(at) == 0).then_some(value)
}

/// `not n or n % 1 ~= 0 or n < lo or n > hi`, negated: an integer within the bounds.
pub fn int_in(n: Option<f64>, lo: f64, hi: f64) -> Option<f64> {
    let n = n?;
    let rem = n - (n / 1.0).floor();
    (rem == 0.0 && n >= lo && n <= hi).then_some(n)
}

/// A double as C converts it to a `long long` on x86-64 (`cvttsd2si`): truncated, and the
/// "integer indefinite" value (i64::MIN) when out of range or NaN.
pub fn to_ll(n: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// `string.format('%d', n)`.
pub fn fmt_d(n: f64) -> String {
    to_ll(n).to_string()
}

/// `string.format('%.0f', n)` (C's formatting: round half to even, `inf`, `nan`, `-nan`).
pub fn fmt_f0(n: f64) -> Vec<u8> {
    // An integer below 2^53 (a fence, a counter): its digits, as %.0f prints them, without
    // snprintf's arbitrary-precision path. -0 keeps C's "-0".
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 && (n != 0.0 || n.is_sign_positive()) {
        return (n as i64).to_string().into_bytes();
    }
    let mut buf = [0u8; 400];
    // SAFETY: the buffer holds any double at %.0f (at most 309 digits and a sign).
    let len = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.0f".as_ptr(), n) };
    let len = usize::try_from(len).unwrap_or(0).min(buf.len() - 1);
    buf[..len].to_vec()
}

/// Lua's `tostring(n)` of a number (`%.14g`), as a string concatenation prints it.
pub fn fmt_g14(n: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: the buffer holds any double at %.14g (at most 22 characters).
    let len = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.14g".as_ptr(), n) };
    let len = usize::try_from(len).unwrap_or(0).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

/// Lua's `string.find(s, '^%d+$')`: one or more ASCII digits, nothing else.
pub fn digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

/// Lua's `string.find(s, '^[1-9]%d*$')`: a plain positive decimal.
pub fn plain_positive(s: &[u8]) -> bool {
    matches!(s.first(), Some(b'1'..=b'9')) && digits(s)
}

/// A digit string's value (`s + 0` in a script: strtod, which rounds as Rust's parse does).
pub fn digits_value(s: &[u8]) -> f64 {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Redis's `string2ll`, which `INCRBY` applies to the stored value: an optional '-', no leading
/// zeros or spaces, within `long long`.
pub fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, body) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if !plain_positive(body) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let v: i64 = text.parse().ok()?;
    (neg == (v < 0)).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tonumber_is_luas() {
        assert_eq!(tonumber(b"5"), Some(5.0));
        assert_eq!(tonumber(b"007"), Some(7.0));
        assert_eq!(tonumber(b"999999999999999"), Some(999_999_999_999_999.0));
        assert_eq!(tonumber(b"9999999999999999"), Some(1e16));
        assert_eq!(tonumber(b" 5 "), Some(5.0));
        assert_eq!(tonumber(b"0x10"), Some(16.0));
        assert_eq!(tonumber(b"1e3"), Some(1000.0));
        assert_eq!(tonumber(b"5\0junk"), Some(5.0));
        assert_eq!(tonumber(b"abc"), None);
        assert_eq!(tonumber(b""), None);
        assert_eq!(tonumber(b"5 x"), None);
        assert!(int_in(tonumber(b"inf"), 1.0, 10.0).is_none());
        assert!(int_in(tonumber(b"nan"), 1.0, 10.0).is_none());
        assert!(int_in(tonumber(b"2.5"), 1.0, 10.0).is_none());
    }

    #[test]
    fn formats_are_cs() {
        assert_eq!(fmt_f0(12.0), b"12");
        assert_eq!(fmt_f0(-0.0), b"-0");
        assert_eq!(fmt_f0(2.5), b"2");
        assert_eq!(fmt_f0(-7.0), b"-7");
        assert_eq!(fmt_f0(1_733_500_000_123_456.0), b"1733500000123456");
        assert_eq!(fmt_f0(9_007_199_254_740_993.0), b"9007199254740992");
        assert_eq!(fmt_g14(-9_007_199_254_740_991.0), "-9.007199254741e+15");
        assert_eq!(fmt_g14(31_622_400_000.0), "31622400000");
        assert_eq!(fmt_f0(f64::INFINITY), b"inf");
        assert_eq!(fmt_d(1e300), i64::MIN.to_string());
        assert_eq!(string2ll(b"-0"), None);
        assert_eq!(string2ll(b"007"), None);
        assert_eq!(string2ll(b"-12"), Some(-12));
        assert_eq!(string2ll(b"9223372036854775808"), None);
    }
}
