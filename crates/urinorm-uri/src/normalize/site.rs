//! The seam for site rules: per-host rewriting that RFC 3986 cannot know,
//! applied by the protocol rung after its transforms (§6.2.4 leaves such
//! equivalences to the protocol and its practice).
//!
//! It owns what a rule set is to the normalizer ([`SiteRewrite`]) and what
//! applying one reports ([`RuleId`], [`Events`]). The rule languages
//! (urinorm's lines, ClearURLs) and their regular expressions live in the
//! engine's `rules` module, which implements the trait: the core knows no
//! rule file.

use std::fmt;

use crate::scratch::Slot;

/// Which rule of a rule set did something: an index into its labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(u32);

impl RuleId {
    pub const fn new(index: u32) -> RuleId {
        RuleId(index)
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// What applying the rules to one URI did, beyond changing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Events(u8);

impl Events {
    /// A rule changed the URI.
    pub const CHANGED: Events = Events(1);
    /// A ClearURLs provider that blocks its URIs whole (`completeProvider`)
    /// matched: the URI is passed on unchanged by it, and counted.
    pub const COMPLETE_PROVIDER: Events = Events(2);
    /// A ClearURLs redirection matched: it is not followed, only counted.
    pub const REDIRECTION: Events = Events(4);

    /// Every event, with its name in stats.
    pub const NAMED: [(Events, &'static str); 3] = [
        (Events::CHANGED, "changed-by-rules"),
        (Events::COMPLETE_PROVIDER, "clearurls-complete-provider"),
        (Events::REDIRECTION, "clearurls-redirection"),
    ];

    /// The events as bits, [`Events::NAMED`]'s order from the lowest.
    pub fn bits(self) -> u32 {
        u32::from(self.0)
    }

    pub fn contains(self, event: Events) -> bool {
        self.0 & event.0 != 0
    }

    pub fn add(&mut self, event: Events) {
        self.0 |= event.0;
    }
}

/// A rule set the protocol rung applies after its transforms. The
/// normalizer checks what it makes: a result that is not a URI, or that
/// normalizing again would change, rejects the line with the reason the
/// rule set gives, naming the rule.
pub trait SiteRewrite: fmt::Debug + Send + Sync {
    /// Rewrites the URI at `out[start..]` (in its protocol-rung form),
    /// calling `fired` with each rule that changed it, in order. `scratch`
    /// is the calling thread's, for the rule set's own buffers.
    fn apply(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        scratch: &mut Slot,
        fired: &mut dyn FnMut(RuleId),
    ) -> Events;

    /// What a rule is called in messages: `site.rules:2 drop-params`.
    fn label(&self, rule: RuleId) -> &str;

    /// The reason a line is rejected with when `rule` made it invalid.
    fn made_invalid(&self, rule: RuleId) -> &'static str;

    /// The reason a line is rejected with when `rule`'s result is not a
    /// fixed point of the normalizer.
    fn not_a_fixed_point(&self, rule: RuleId) -> &'static str;

    /// What the rule set holds and a fingerprint of it: what a seen store
    /// records, so that keys made under other rules are never mixed in.
    fn describe(&self) -> &str;
}
