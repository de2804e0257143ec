//! Key names and hash slots.
//!
//! Every key of one operation must live in one Redis Cluster hash slot, or the server refuses the
//! script (shebang scripts reject cross-slot access). [`Keyspace`] builds
//! `<namespace>:<primitive>:v<schema>:{<tag>}:<part>...`, so all keys of one resource share the
//! `{tag}` and therefore the slot, and [`same_slot`] checks any key list before it is sent.
//!
//! Choose tags with many distinct values (an order id, a user id). A low-cardinality tag such as
//! `{global}` puts all traffic on one shard.

use crate::Error;

/// Longest accepted tag or part, in bytes. Keys are sent on every call and stored per record.
pub const MAX_TAG_LEN: usize = 512;

/// The Redis Cluster hash slot of `key`: CRC16/XMODEM of the hash tag (the bytes between the
/// first `{` and the next `}`, when that is non-empty) or of the whole key, modulo 16384.
///
/// ```
/// use redis_atomic::keys::slot;
/// assert_eq!(slot(b"foo"), 12182);
/// assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
/// assert_eq!(slot(b"{}x"), slot(b"{}x")); // empty tag: whole key
/// ```
pub fn slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % 16384
}

/// The bytes that decide `key`'s slot: its hash tag (between the first `{` and the next `}`,
/// when that is non-empty), or the whole key. The one hash-tag parser of the crate.
pub(crate) fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// CRC16/XMODEM (polynomial 0x1021, initial 0), as Redis Cluster uses.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The common slot of `keys`, or [`Error::CrossSlot`] naming them when they differ. (Public for
/// callers that build their own keys, and for the CLI's `slot --check-same`.)
pub fn same_slot<K: AsRef<[u8]>>(keys: &[K]) -> Result<Option<u16>, Error> {
    let mut slots = keys.iter().map(|k| slot(k.as_ref()));
    let Some(first) = slots.next() else {
        return Ok(None);
    };
    if slots.all(|s| s == first) {
        Ok(Some(first))
    } else {
        Err(Error::CrossSlot {
            slots: keys.iter().map(|k| slot(k.as_ref())).collect(),
        })
    }
}

/// Builds the keys of every primitive under one namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyspace {
    namespace: String,
}

impl Keyspace {
    /// A keyspace whose keys all start with `namespace:` (e.g. your service name).
    ///
    /// The namespace must be non-empty, at most [`MAX_TAG_LEN`] bytes, and free of `{`, `}` and
    /// `:` (a brace would become the hash tag of every key).
    pub fn new(namespace: impl Into<String>) -> Result<Self, Error> {
        let namespace = namespace.into();
        check_part("namespace", &namespace)?;
        if namespace.contains(':') {
            return Err(Error::BadArgument("namespace must not contain ':'".into()));
        }
        Ok(Keyspace { namespace })
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// `<namespace>:<primitive>:v<schema>:{<tag>}` followed by `:<part>` for each part.
    ///
    /// ```
    /// let ks = redis_atomic::Keyspace::new("app").unwrap();
    /// assert_eq!(ks.key("lock", 1, "order-42", &["fence"]).unwrap(), "app:lock:v1:{order-42}:fence");
    /// assert!(ks.key("lock", 1, "", &[]).is_err());
    /// ```
    pub fn key(
        &self,
        primitive: &str,
        schema: u32,
        tag: &str,
        parts: &[&str],
    ) -> Result<String, Error> {
        check_part("tag", tag)?;
        let mut key = format!("{}:{primitive}:v{schema}:{{{tag}}}", self.namespace);
        for part in parts {
            check_part("key part", part)?;
            key.push(':');
            key.push_str(part);
        }
        Ok(key)
    }
}

/// 128 bits of SHA-256 of `value` in hex, after checking it is 1..=`max` bytes (a typed error
/// naming `what` otherwise): how user-chosen ids (rate-limited identities, request ids, claim ids)
/// become key parts, so user bytes never reach key names and any id fits one part.
pub(crate) fn digest(value: &str, max: usize, what: &str) -> Result<String, Error> {
    use sha2::{Digest, Sha256};
    if value.is_empty() || value.len() > max {
        return Err(Error::BadArgument(format!(
            "{what} must be 1..={max} bytes, got {}",
            value.len()
        )));
    }
    Ok(hex::encode(&Sha256::digest(value.as_bytes())[..16]))
}

fn check_part(what: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::BadArgument(format!("{what} must not be empty")));
    }
    if value.len() > MAX_TAG_LEN {
        return Err(Error::BadArgument(format!(
            "{what} is {} bytes, more than {MAX_TAG_LEN}",
            value.len()
        )));
    }
    if value.contains(['{', '}']) {
        return Err(Error::BadArgument(format!(
            "{what} must not contain '{{' or '}}' (they decide the cluster hash slot)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash tag is the first non-empty `{...}`, else the whole key.
    #[test]
    fn hash_tags() {
        assert_eq!(hash_tag(b"app:lock:v1:{order-42}:fence"), b"order-42");
        assert_eq!(hash_tag(b"{}x"), b"{}x");
    }

    /// Known slots from the Redis Cluster specification and redis-rs' tests.
    #[test]
    fn known_slots() {
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"123456789"), 0x31C3); // the CRC16/XMODEM check value
        assert_eq!(slot(b"{foo}bar"), slot(b"foo"));
        assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(slot(b"foo{bar}{zap}"), slot(b"bar"));
    }

    /// Keys of one resource share a slot; different resources are refused together.
    #[test]
    fn same_slot_checks() {
        let ks = Keyspace::new("app").unwrap();
        let a = ks.key("lock", 1, "r1", &[]).unwrap();
        let b = ks.key("lock", 1, "r1", &["fence"]).unwrap();
        assert_eq!(same_slot(&[&a, &b]).unwrap(), Some(slot(b"r1")));
        let c = ks.key("lock", 1, "another", &[]).unwrap();
        assert!(matches!(same_slot(&[&a, &c]), Err(Error::CrossSlot { .. })));
    }

    /// Bad namespaces and tags are typed errors, never panics.
    #[test]
    fn bad_parts() {
        assert!(Keyspace::new("").is_err());
        assert!(Keyspace::new("a{b").is_err());
        assert!(Keyspace::new("a:b").is_err());
        let ks = Keyspace::new("app").unwrap();
        assert!(ks
            .key("lock", 1, &"x".repeat(MAX_TAG_LEN + 1), &[])
            .is_err());
        assert!(ks.key("lock", 1, "a}b", &[]).is_err());
    }
}
