//! The built binary run as a user runs it, one module per command or feature: real files, standard input, exit codes, every run's counts.

mod aligned;
mod columns;
mod compressed;
mod dedup;
mod docs;
mod domains;
mod ends;
mod escape;
mod explain;
mod fetchable;
mod hostile;
mod ia;
mod ladder;
mod ladder_html;
mod live;
mod messages;
mod offsets;
mod outputs;
mod readme;
mod resolve;
mod rules;
mod scope;
mod seen;
mod serve;
mod sort;
mod spill;
