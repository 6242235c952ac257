//! The seam for site rules: per-host rewriting that RFC 3986 cannot know,
//! applied by the protocol rung after its transforms (§6.2.4 leaves such
//! equivalences to the protocol and its practice).
//!
//! It owns what a rule set is to the normalizer ([`SiteRewrite`]), what
//! applying one reports ([`RuleId`], [`Events`]), and the refusal of a
//! rule's result ([`RuleRefusal`]). The rule languages
//! (urinorm's lines, ClearURLs) and their regular expressions live in the
//! engine's `rules` module, which implements the trait: the core knows no
//! rule file.

use std::fmt;
use std::sync::Arc;

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
/// normalizing again would change, is refused ([`RuleRefusal`]), naming
/// the rule by its [`SiteRewrite::label`].
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

    /// What the rule set holds and a fingerprint of it: what a seen store
    /// records, so that keys made under other rules are never mixed in.
    fn describe(&self) -> &str;
}

/// What was wrong with a site rule's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleFault {
    /// The result is not a URI reference.
    MadeInvalid,
    /// Normalizing the result again, rules and all, changes it.
    NotAFixedPoint,
}

/// A URI refused for the site rule that last changed it: a rule never
/// makes a URI invalid or unstable silently. It names the rule by its
/// label, so that it says why on its own.
///
/// ```
/// use urinorm_uri::normalize::site::{RuleFault, RuleRefusal};
/// let refusal = RuleRefusal::new("site.rules:2 drop-params", RuleFault::MadeInvalid);
/// assert_eq!(refusal.to_string(), "rule site.rules:2 drop-params makes the URI invalid");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuleRefusal {
    label: Arc<str>,
    fault: RuleFault,
}

impl RuleRefusal {
    pub fn new(label: &str, fault: RuleFault) -> RuleRefusal {
        RuleRefusal {
            label: label.into(),
            fault,
        }
    }

    /// The rule's label ([`SiteRewrite::label`]).
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn fault(&self) -> RuleFault {
        self.fault
    }
}

impl fmt::Display for RuleRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = &self.label;
        match self.fault {
            RuleFault::MadeInvalid => write!(f, "rule {label} makes the URI invalid"),
            RuleFault::NotAFixedPoint => {
                write!(f, "rule {label} gives a URI that normalizing again changes")
            }
        }
    }
}
