//! One node as `functions` sees it: the versions of the family it holds, and how this run's
//! library stands there (`current`, `missing`, `conflict`, `collision`, `unreachable`).
//!
//! A `collision` is a node where another library already registers one of our function names.
//! Function names are global on a server, so `FUNCTION LOAD` would fail there; the state names
//! the function and its owner (from `FUNCTION LIST`) instead of guessing from an error message.

use super::nodes::{self, Installed, Node, Owned, Role};
use super::spec::LibrarySpec;
use serde::Serialize;

/// One node as observed (and, after a change, as changed).
#[derive(Clone, Debug, Serialize)]
pub struct NodeState {
    /// The node.
    #[serde(flatten)]
    pub node: Node,
    /// The family's libraries loaded, oldest first (empty when unreachable).
    pub versions: Vec<Installed>,
    /// Our function names registered by another library, with that library.
    pub collisions: Vec<Owned>,
    /// `current` (this run's version, same bytes), `missing`, `conflict` (same name, other
    /// bytes), `collision` (a function name owned by another library) or `unreachable`.
    pub state: &'static str,
    /// What this run did or would do here.
    pub action: Option<String>,
    /// Connection or command error.
    pub error: Option<String>,
}

impl NodeState {
    /// Lists what `node` has loaded and judges it against `spec`.
    pub fn observe(node: Node, spec: &LibrarySpec) -> NodeState {
        let listed = nodes::connect(&node.info).and_then(|mut c| nodes::listing(&mut c, spec));
        let (listing, error) = match listed {
            Ok(l) => (l, None),
            Err(e) => (nodes::Listing::default(), Some(crate::output::one_line(&e))),
        };
        let collisions = listing
            .functions
            .into_iter()
            .filter(|o| {
                o.library != spec.def.name && spec.functions.iter().any(|f| *f == o.function)
            })
            .collect();
        let mut s = NodeState {
            node,
            versions: listing.versions,
            collisions,
            state: "unreachable",
            action: None,
            error,
        };
        s.state = s.judge(spec);
        s
    }

    /// The same node observed again, keeping `action`.
    pub fn again(&self, spec: &LibrarySpec, action: Option<String>) -> NodeState {
        NodeState {
            action,
            ..NodeState::observe(self.node.clone(), spec)
        }
    }

    fn judge(&self, spec: &LibrarySpec) -> &'static str {
        if self.error.is_some() {
            return "unreachable";
        }
        match self.versions.iter().find(|l| l.name == spec.def.name) {
            Some(l) if l.sha1 == spec.def.sha1 => "current",
            Some(_) => "conflict",
            None if !self.collisions.is_empty() => "collision",
            None => "missing",
        }
    }

    /// The code loaded under this run's library name, when it differs.
    pub fn conflicting_code(&self, spec: &LibrarySpec) -> Option<&str> {
        self.versions
            .iter()
            .find(|l| l.name == spec.def.name && l.sha1 != spec.def.sha1)
            .map(|l| l.code.as_str())
    }

    /// Why this node refuses a deploy, if it does.
    pub fn refusal(&self, spec: &LibrarySpec) -> Option<String> {
        let name = spec.def.name;
        match self.state {
            "conflict" => Some(format!(
                "{} already has {name} with different code: refusing to replace a loaded version \
                 (bump {} for new code)",
                self.node.addr, spec.version_file
            )),
            "collision" => Some(format!(
                "{}: {}: refusing to load {name} (function names are global on a server: rename \
                 the script or the library)",
                self.node.addr,
                self.collisions_text()
            )),
            _ => None,
        }
    }

    /// `function f already belongs to library l`, for each collision.
    pub fn collisions_text(&self) -> String {
        let each: Vec<String> = self
            .collisions
            .iter()
            .map(|o| {
                format!(
                    "function {} already belongs to library {}",
                    o.function, o.library
                )
            })
            .collect();
        each.join(", ")
    }

    /// Whether `version` of the family is loaded here.
    pub fn has(&self, version: u32) -> bool {
        self.versions.iter().any(|l| l.version == version)
    }

    /// Whether the node takes writes (loads and deletes go there).
    pub fn is_primary(&self) -> bool {
        self.node.role == Role::Primary
    }
}

/// Every node, observed.
pub fn observe(
    url: &str,
    cluster: bool,
    tls: Option<&redis_atomic::TlsOptions>,
    spec: &LibrarySpec,
) -> anyhow::Result<Vec<NodeState>> {
    Ok(nodes::discover(url, cluster, tls)?
        .into_iter()
        .map(|n| NodeState::observe(n, spec))
        .collect())
}
