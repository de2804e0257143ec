//! # redis-atomic-server
//!
//! The HTTP faces of redis-atomic, ready to run:
//!
//! * `serve` ([`faces::serve`]): every primitive over HTTP/JSON under `/v1` (locks, semaphores,
//!   fenced writes, quotas, dedup, idempotency, queues with dead letters, rate limits), OpenAPI
//!   at `/openapi.json`, bearer tokens mapped to namespaces;
//! * `proxy` ([`faces::proxy`]): a reverse proxy that gives any HTTP service `Idempotency-Key`
//!   semantics and rate limits, per route.
//!
//! **Who it is for:** services in any language that reach the primitives over HTTP, and the
//! operators who run them — through `redis-atomic serve` / `redis-atomic proxy`, or embedded in a
//! Rust program with [`start::run`].
//!
//! **Why a crate of its own:** the faces are applications, not middleware. Their config file
//! (TOML), OpenAPI document (utoipa), Prometheus exporter, auth and health endpoints used to
//! live in `redis-atomic-http`, so every user of one tower layer compiled them all; and their
//! start-up lived in the CLI, written once per face and drifting apart (`serve` and `proxy`
//! started in different orders and printed different first lines).
//!
//! What every face shares is here once: the [`config`] file, [`auth`], [`health`], [`metrics`],
//! and the one start-up sequence ([`start`]: config → listen check → Redis → scripts → bind →
//! the bound address as the first stdout line → serve until SIGTERM/ctrl-c → drain). A face is a
//! [`start::Face`]: a module under [`faces`] that builds its router; a third face (an Envoy gRPC
//! rate-limit service) slots in beside the two.

pub mod auth;
pub mod config;
pub mod faces;
pub mod health;
pub mod metrics;
pub mod start;
