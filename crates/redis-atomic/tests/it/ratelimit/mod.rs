//! Rate limits: every algorithm's bounds, policies, the anchored window, request ids (and under
//! faults), entries (many identities, one decision), and the scripts against their pure models
//! (proptests).

mod anchored;
mod basics;
mod entries;
mod faults;
mod model;
mod policy;
mod reqid;
mod reqid_faults;
