//! Text from clients: which characters a name may not hold (part of the contract), how much of a
//! bad value a message echoes, and how text is made safe for an operator's terminal.

/// The most characters of an offending value an error message repeats.
pub const ECHO_CHARS: usize = 64;

/// Characters a name may not hold: control characters, and the invisible ones that make two
/// names look alike or reorder what a terminal shows (bidirectional overrides and isolates,
/// zero-width characters, the byte-order mark).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Checks a name a client sent (a claim key, a run id, a client id, ...): at most `max` bytes,
/// none of them hidden, and not empty when `required`. The message names the field, repeats a
/// bounded prefix of the value with its size, and gives an example of a good one.
pub fn check_name(
    field: &str,
    value: &str,
    required: bool,
    max: usize,
    example: &str,
) -> Result<(), String> {
    if required && value.is_empty() {
        return Err(format!("{field} is empty; give one, e.g. {example}"));
    }
    if value.len() > max || value.chars().any(is_hidden) {
        return Err(format!(
            "{field} \"{}\" ({} bytes) must be at most {max} bytes of visible characters, \
             e.g. {example}",
            printable_prefix(value),
            value.len()
        ));
    }
    Ok(())
}

/// At most `ECHO_CHARS` characters of `s`, hidden ones escaped, and its length when cut.
pub fn printable_prefix(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(ECHO_CHARS)
        .map(|c| {
            if is_hidden(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    if s.chars().nth(ECHO_CHARS).is_some() {
        out.push_str(&format!("… ({} bytes)", s.len()));
    }
    out
}

/// `s` with every hidden character replaced by U+FFFD, so no escape sequence from a client
/// reaches a terminal.
pub fn for_terminal(s: &str) -> String {
    if !s.chars().any(is_hidden) {
        return s.to_string();
    }
    s.chars()
        .map(|c| if is_hidden(c) { '\u{FFFD}' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_checked_for_size_hidden_characters_and_presence() {
        assert_eq!(check_name("run_id", "", false, 8, "agent-7"), Ok(()));
        assert_eq!(check_name("run_id", "agent-7", true, 8, "agent-7"), Ok(()));
        let e = check_name("claim key", "", true, 8, "job-1").expect_err("empty");
        assert!(
            e.starts_with("claim key is empty") && e.contains("job-1"),
            "{e}"
        );
        let e = check_name("run_id", "123456789", false, 8, "agent-7").expect_err("long");
        assert!(
            e.contains("\"123456789\" (9 bytes) must be at most 8 bytes"),
            "{e}"
        );
        let e = check_name("client_id", "a\u{202E}b", false, 64, "x").expect_err("hidden");
        assert!(
            e.contains("a\\u{202e}b") && e.contains("visible characters"),
            "{e}"
        );
    }

    #[test]
    fn hidden_characters_are_found_escaped_and_replaced() {
        for c in [
            '\u{1b}', '\u{7}', '\u{202E}', '\u{200B}', '\u{2066}', '\u{FEFF}',
        ] {
            assert!(is_hidden(c), "{c:?}");
        }
        assert!(!is_hidden('é') && !is_hidden('/') && !is_hidden(' '));
        assert_eq!(for_terminal("a\u{1b}[2Jb"), "a\u{FFFD}[2Jb");
        assert_eq!(printable_prefix("x\u{202E}y"), "x\\u{202e}y");
        let long = "z".repeat(20_000);
        let p = printable_prefix(&long);
        assert!(p.len() < 100 && p.ends_with("(20000 bytes)"), "{p}");
    }
}
