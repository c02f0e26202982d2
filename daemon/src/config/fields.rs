//! Reading one field of the config file. Every message names the table, the field, the value
//! given and what would do instead: `[keys."openai"] max_concurrency = 0: must be a whole number
//! from 1 to 1000000`.

use std::fmt;
use std::time::Duration;

/// A table of the config file, written as the file writes it: `[daemon]`, `[keys."openai"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Section(String);

impl Section {
    /// A table of its own: `[daemon]`, `[run_budget]`.
    pub(super) fn table(name: &str) -> Section {
        Section(format!("[{name}]"))
    }

    /// A named entry of a table: `[keys."openai"]`, `[profiles."batch"]`.
    pub(super) fn entry(table: &str, name: &str) -> Section {
        Section(format!("[{table}.{name:?}]"))
    }

    /// `[section] field = value: why`.
    pub(super) fn error(
        &self,
        field: &str,
        value: impl fmt::Display,
        why: impl fmt::Display,
    ) -> String {
        format!("{self} {field} = {value}: {why}")
    }

    /// A duration field (`"250ms"`, `"1m30s"`), when given.
    pub(super) fn duration(
        &self,
        field: &str,
        v: &Option<String>,
    ) -> Result<Option<Duration>, String> {
        v.as_deref()
            .map(|s| {
                crate::duration::parse(s).map_err(|e| self.error(field, format_args!("{s:?}"), e))
            })
            .transpose()
    }

    /// A whole number within `min..=max`, when given.
    pub(super) fn count(
        &self,
        field: &str,
        v: Option<i64>,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, String> {
        match v {
            Some(n) if !(min..=max).contains(&n) => Err(self.error(
                field,
                n,
                format_args!("must be a whole number from {min} to {max}"),
            )),
            other => Ok(other),
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_table_the_field_and_the_value() {
        let k = Section::entry("keys", "openai");
        assert_eq!(k.to_string(), "[keys.\"openai\"]");
        assert_eq!(
            k.count("max_concurrency", Some(0), 1, 10)
                .expect_err("range"),
            "[keys.\"openai\"] max_concurrency = 0: must be a whole number from 1 to 10"
        );
        assert_eq!(k.count("max_concurrency", None, 1, 10), Ok(None));
        let d = Section::table("daemon");
        assert_eq!(
            d.duration("lease_ttl", &Some("2s".into())),
            Ok(Some(Duration::from_secs(2)))
        );
        let e = d
            .duration("lease_ttl", &Some("soon".into()))
            .expect_err("bad");
        assert!(e.starts_with("[daemon] lease_ttl = \"soon\": "), "{e}");
    }
}
