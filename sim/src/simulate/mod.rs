//! `llmctl simulate` (to come in this module).
