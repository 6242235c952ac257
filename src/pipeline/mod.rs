//! The bulk engine: reading inputs, splitting lines, and writing results.
//! It knows nothing of RFC rules; it calls the library for those.

pub mod input;
