//! The fleet's Redis scripts, messages and renewal schedule, as the daemons run them: for
//! `llmctl simulate --scenario fleet-scale`, which drives them for many virtual hosts.

pub use super::fleet::redis::{
    FleetRedis, LineAnswer, LineAsk, LineDimension, PartAnswer, PartExtras, Target, CHANNEL,
};
pub use super::fleet::{
    answered_part, apply_line, burst_units, cooldown_text, due, give_back_ask, is_idle, line_ask,
    parse_message, renew_text, tries_line, Held, Message, IDLE_SLICES, LEASE_SLICES, LINE_AHEAD,
    MIN_RENEWAL_GAP, RENEW_SLICES, TICK,
};
