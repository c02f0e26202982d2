//! What the wire carries of text from clients, made safe to print. The rules for names are in
//! `llmctl_common::text` (the engine checks names with them too, knowing nothing of the wire).

pub use llmctl_common::text::*;

/// Makes every text a client could have set in a status safe to print (`llmctl status`, `top`).
pub fn clean_status(st: &mut crate::v1::StatusResponse) {
    let clean = |s: &mut String| {
        if s.chars().any(is_hidden) {
            *s = for_terminal(s);
        }
    };
    clean(&mut st.socket);
    clean(&mut st.store_error);
    for k in &mut st.keys {
        clean(&mut k.key);
        clean(&mut k.cooldown_reason);
        for a in &mut k.ancestors {
            clean(a);
        }
        k.last_headers = std::mem::take(&mut k.last_headers)
            .into_iter()
            .map(|(n, v)| (for_terminal(&n), for_terminal(&v)))
            .collect();
    }
    for e in &mut st.events {
        clean(&mut e.key);
        clean(&mut e.kind);
        clean(&mut e.message);
    }
    for r in &mut st.runs {
        clean(&mut r.run_id);
        clean(&mut r.exhausted);
    }
    for c in &mut st.clients {
        clean(&mut c.client_id);
        clean(&mut c.process_name);
        clean(&mut c.user);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_cleaned_of_escapes() {
        let mut st = crate::v1::StatusResponse {
            keys: vec![crate::v1::KeyStatus {
                key: "k".into(),
                cooldown_reason: "\u{1b}]0;owned\u{7}".into(),
                ..Default::default()
            }],
            events: vec![crate::v1::Event {
                message: "\u{1b}[2J".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        clean_status(&mut st);
        assert!(!st.keys[0].cooldown_reason.contains('\u{1b}'));
        assert!(!st.events[0].message.contains('\u{1b}'));
    }
}
