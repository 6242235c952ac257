//! The normalizer's rungs (RFC 3986 §6.2), the protocol rung's transforms and site rules, as a library: conformance vectors and properties.

mod conformance;
mod properties;
mod protocol;
mod site_rules;
