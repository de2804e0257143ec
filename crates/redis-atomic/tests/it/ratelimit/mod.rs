//! Rate limits: every algorithm's bounds, policies, the anchored window, request ids (and under
//! faults), and the scripts against their pure models (proptests).

mod anchored;
mod basics;
mod faults;
mod model;
mod policy;
mod reqid;
mod reqid_faults;
