//! Empty: the work is in benches/peers.rs.
