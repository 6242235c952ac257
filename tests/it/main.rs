//! The integration tests, one binary (it links once, not once per file),
//! one module per area, so the test of a feature is where a reader looks:
//! `uri` (the parser and resolver against others' vectors), `rungs` (the
//! normalizer as a library), `cli` (the built binary, one module per
//! command or feature), `seen_kill` (the seen store's crash safety, by
//! killing writers). Shared helpers are in `common`.

mod cli;
mod common;
mod rungs;
mod seen_kill;
mod uri;
