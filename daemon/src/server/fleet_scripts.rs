//! The fleet's Redis scripts, messages and renewal schedule, as the daemons run them: for
//! `llmctl simulate --scenario fleet-scale`, which drives them for many virtual hosts.

pub use super::fleet::redis::{FleetRedis, PartAnswer, PartExtras, CHANNEL};
pub use super::fleet::{
    answered_part, cooldown_text, due, is_idle, parse_message, renew_text, Held, Message,
    IDLE_SLICES, LEASE_SLICES, MIN_RENEWAL_GAP, RENEW_SLICES, TICK,
};
