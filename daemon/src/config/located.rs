//! Where in the file a TOML or type error is: the rules live in `llmctl_common::located`,
//! which the proxy's config reads too; here, the daemon's config tested against them.

pub use llmctl_common::located::*;

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn error(text: &str) -> String {
        match Config::parse(text, "FILE") {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{text:?} parsed"),
        }
    }

    #[test]
    fn a_wrong_type_names_the_table_the_field_and_both_types() {
        assert_eq!(
            error("[keys.\"x\"]\nrequests_per_minute = \"many\"\n"),
            "config file FILE: [keys.\"x\"] requests_per_minute: expected a number, got the string \"many\" (line 2)"
        );
        assert_eq!(
            error("[daemon]\n# the leases\nlease_ttl = 5\n"),
            "config file FILE: [daemon] lease_ttl: expected a string, got the number 5; durations and names are written in quotes, like \"10m\" (line 3)"
        );
    }

    #[test]
    fn an_unknown_field_names_its_table_and_the_likely_one() {
        let e = error("[keys.\"x\"]\nrequests_per_minut = 5\n");
        assert!(
            e.starts_with("config file FILE: [keys.\"x\"] requests_per_minut: unknown field `requests_per_minut`"),
            "{e}"
        );
        assert!(
            e.ends_with("did you mean `requests_per_minute`? (line 2)"),
            "{e}"
        );
        let far = error("[keys.\"x\"]\nshiny = true\n");
        assert!(!far.contains("did you mean"), "{far}");
        // A table's own name misspelt: that table, not the one before it.
        let table = error("[keys.\"x\"]\nrequests_per_minute = 5\n[deamon]\n");
        assert!(
            table.contains("FILE: [deamon]: unknown field `deamon`"),
            "{table}"
        );
        assert!(table.contains("did you mean `daemon`?"), "{table}");
    }

    #[test]
    fn an_inline_tables_member_is_named() {
        let e = error(
            "[keys.\"a\"]\nrequests_per_minute = 5\n[route_groups.chat]\nmembers = [{ key = \"a\", when = 7 }]\n",
        );
        assert!(e.contains("[route_groups.chat] when: "), "{e}");
    }

    #[test]
    fn a_value_out_of_range_names_its_table_and_field() {
        let e = error("[keys.\"x\"]\nrequests_per_minute = -5\n");
        assert!(e.contains("[keys.\"x\"] requests_per_minute"), "{e}");
    }
}
