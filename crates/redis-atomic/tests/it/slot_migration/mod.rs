//! Cluster slots: the client's slot function against the server's, and every primitive while its
//! slot migrates between nodes.

mod chain;
mod migration;
mod slot;
