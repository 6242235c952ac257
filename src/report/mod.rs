//! What a crawl index's evidence says about the ladder of rungs: the
//! digests that say which merges are right ([`evidence`]), the ladder
//! report over a URL list or an index ([`ladder`]), and the site rules the
//! digests support ([`learn`]). It runs on the pipeline's chunks and
//! threads; it prints nothing: the command line renders what it returns.

pub mod evidence;
pub mod ladder;
pub mod learn;
