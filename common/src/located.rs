//! Where in the file a TOML or type error is, in the words of the config: the table and the
//! field (`[keys."x"] requests_per_minute: expected a number, got the string "many" (line 2)`),
//! not the parser's (`invalid type: string "many", expected i64`).

/// The error of `toml::from_str` on `text`, with its table, field and line.
pub fn describe(text: &str, e: &toml::de::Error) -> String {
    let message = plain(e.message().trim());
    let Some(span) = e.span() else {
        return message;
    };
    let at = span.start.min(text.len());
    let line_no = text[..at].matches('\n').count() + 1;
    let lines: Vec<&str> = text.lines().collect();
    let line = lines.get(line_no - 1).copied().unwrap_or("");
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let field = field_of(line, at - line_start);
    // The table the line is in: the nearest header above it, or the line itself.
    let table = lines[..line_no.min(lines.len())]
        .iter()
        .rev()
        .map(|l| strip_comment(l).trim())
        .find(|l| l.starts_with('['))
        .map(str::to_string);
    let place = match (table, field) {
        (Some(t), Some(f)) => format!("{t} {f}: "),
        (None, Some(f)) => format!("{f}: "),
        (Some(t), None) => format!("{t}: "),
        (None, None) => String::new(),
    };
    let hint = match (
        unknown_field(&message),
        e.message().split_once("expected one of"),
    ) {
        (Some(name), Some((_, known))) => closest(&name, known)
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default(),
        _ => String::new(),
    };
    format!("{place}{message}{hint} (line {line_no})")
}

/// The field an error at byte `col` of `line` is about: the name before the last `=` ahead of
/// it (an inline table's member, `{ key = "a", when = "x" }`), else the line's own key.
fn field_of(line: &str, col: usize) -> Option<String> {
    let l = strip_comment(line);
    if l.trim_start().starts_with('[') {
        return None;
    }
    let before = &l[..col.min(l.len())];
    let name = match before.rfind('=') {
        Some(eq) => before[..eq].trim_end(),
        None => l.split_once('=')?.0.trim_end(),
    };
    let start = name
        .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '"' | '.')))
        .map_or(0, |i| i + 1);
    let key = name[start..].trim();
    (!key.is_empty()).then(|| key.to_string())
}

fn strip_comment(line: &str) -> &str {
    // A '#' inside a quoted key or value is not a comment; good enough for locating.
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '#' if !quoted => return &line[..i],
            _ => {}
        }
    }
    line
}

/// serde's "invalid type: string \"many\", expected i64" as "expected a number, got the
/// string \"many\"".
fn plain(message: &str) -> String {
    let Some(rest) = message.strip_prefix("invalid type: ") else {
        return message.to_string();
    };
    let Some((got, expected)) = rest.split_once(", expected ") else {
        return message.to_string();
    };
    let expected = match expected {
        "i64" | "u64" | "i32" | "u32" | "usize" | "f64" | "f32" | "u16" | "u8" => "a number",
        "a boolean" | "bool" => "true or false",
        other => other,
    };
    let got = if let Some(v) = got.strip_prefix("integer ") {
        format!("the number {}", v.trim_matches('`'))
    } else if let Some(v) = got.strip_prefix("floating point ") {
        format!("the number {}", v.trim_matches('`'))
    } else if let Some(v) = got.strip_prefix("string ") {
        format!("the string {v}")
    } else if let Some(v) = got.strip_prefix("boolean ") {
        v.trim_matches('`').to_string()
    } else {
        got.to_string()
    };
    let quote = if expected == "a string" && got.starts_with("the number") {
        "; durations and names are written in quotes, like \"10m\""
    } else {
        ""
    };
    format!("expected {expected}, got {got}{quote}")
}

/// The name in "unknown field `x`, expected …".
fn unknown_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(n, _)| n.to_string())
}

/// The known name nearest to `name`, when it is near enough to be a typo.
fn closest(name: &str, known: &str) -> Option<String> {
    known
        .split(',')
        .map(|k| k.trim().trim_start_matches("or ").trim().trim_matches('`'))
        .filter(|k| !k.is_empty())
        .map(|k| (distance(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 5))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.to_string())
}

/// Edit distance (Levenshtein) of two short names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
