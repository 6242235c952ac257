//! The URI core, against vectors written by others: parsing (Appendix A), resolution (§5.4), SURT, the Public Suffix List, and the fuzzers' finds.

mod conformance;
mod fuzz_regressions;
mod grammar;
mod properties;
mod psl_cross_check;
mod surt;
