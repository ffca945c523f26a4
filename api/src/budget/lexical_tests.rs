//! Unit tests of `lexical.rs`: tokens counted as GraphQL lexes them (strings, block strings,
//! comments, spreads), brackets inside strings and comments not counted as nesting, and each
//! limit refused in its own words.

use super::*;

fn limits() -> QueryLimitsConfig {
    QueryLimitsConfig::default()
}

fn counts(text: &str) -> TextCounts {
    check(text, &limits()).unwrap()
}

#[test]
fn tokens_are_counted_as_graphql_lexes_them() {
    // query Q ( $ a : Int = -1.5e+3 ) { x ( s : "…" , b : """…""" ) @ skip ( if : true ) { ... F } }
    let text = r#"query Q($a: Int = -1.5e+3) {
        x(s: "a \" { [ ( \\", b: """ { [ \""" ( """) @skip(if: true) { ...F } # { [ ( @
    }"#;
    let counted = counts(text);
    assert_eq!(counted.tokens, 32, "{counted:?}");
    assert_eq!(counted.directives, 1);
    assert_eq!(
        counted.nesting, 2,
        "the operation's set and one level in it, not strings"
    );
}

#[test]
fn commas_and_whitespace_are_not_tokens() {
    assert_eq!(counts("{ a, b,,, c }").tokens, 5);
    assert_eq!(counts("{a b c}").tokens, 5);
}

#[test]
fn an_unterminated_string_ends_at_its_line() {
    // The parser refuses this text; until then the second line is still counted.
    let counted = counts("{ a(s: \"open\n) { b } }");
    assert_eq!(counted.nesting, 2);
}

#[test]
fn a_value_nested_past_the_limit_is_refused_where_it_passes_it() {
    let deep = format!(
        "{{ agents(filter: {{tags: {}\"x\"{}}}) {{ id }} }}",
        "[".repeat(5_000),
        "]".repeat(5_000)
    );
    let error = check(&deep, &limits()).unwrap_err();
    // `{` then `(` then `{` then 30 `[`: the 33rd bracket is the one too deep, on column 54.
    assert_eq!(
        error,
        BudgetError::TooDeep {
            limit: 32,
            at: Pos {
                line: 1,
                column: 54
            }
        }
    );
    assert_eq!(
        error.to_string(),
        "Query is nested too deep: it nests more than `32` levels"
    );
    assert_eq!(
        error.subgraph_message(),
        "query has a depth that exceeds the limit of `32`"
    );
}

#[test]
fn brackets_in_strings_block_strings_and_comments_do_not_nest() {
    let many = "[".repeat(1_000);
    for text in [
        format!("{{ a(s: \"{many}\") }}"),
        format!("{{ a(s: \"\"\"{many}\\\"\"\"{many}\"\"\") }}"),
        format!("{{ a(b: 1 # {many}\n) }}"),
    ] {
        assert_eq!(counts(&text).nesting, 2, "{text}");
    }
}

#[test]
fn each_limit_is_refused_in_its_own_words() {
    let long = format!("{{ a }} #{}", "x".repeat(16 * 1024));
    assert_eq!(
        check(&long, &limits()).unwrap_err().to_string(),
        format!(
            "the query is {} bytes; at most 16384 are accepted",
            long.len()
        )
    );
    let many = format!("{{ {} }}", "a ".repeat(2_000));
    assert_eq!(
        check(&many, &limits()).unwrap_err().to_string(),
        "The query has 2002 tokens; at most `2000` are accepted"
    );
    let directives = format!("{{ a {} }}", "@skip(if: false) ".repeat(51));
    assert_eq!(
        check(&directives, &limits()).unwrap_err().to_string(),
        "The query has 51 directives; at most `50` are accepted"
    );
}

#[test]
fn a_spread_is_one_token_and_a_number_stops_before_one() {
    assert_eq!(counts("{ ...F }").tokens, 4);
    assert_eq!(counts("{ ... on A { b } }").tokens, 8);
    assert_eq!(counts("[1...F]").tokens, 5);
}

#[test]
fn a_block_string_never_closed_is_refused_before_the_parser_nests_through_it() {
    // The parser reads `"""x"` as `""` then `"x"` and would descend into every `[` after it.
    let text = format!(
        "{{ agents(chainIds: [\"\"\"x\" {} ) {{ id }} }}",
        "[".repeat(8_000)
    );
    let refused = check(&text, &limits()).unwrap_err();
    assert_eq!(
        refused,
        BudgetError::UnclosedBlockString {
            at: Pos {
                line: 1,
                column: 21
            }
        }
    );
    // A closed one still counts as one token, whatever it holds.
    assert_eq!(counts("{ a(b: \"\"\"[[[\"\"\") }").nesting, 2);
}

#[test]
fn variables_longer_than_the_text_may_be_are_refused() {
    let budget = super::super::QueryBudget::new(limits());
    let small: async_graphql::Variables =
        serde_json::from_value(serde_json::json!({ "w": { "id": "a" } })).unwrap();
    assert_eq!(budget.check_variables(&small), Ok(()));
    let big: async_graphql::Variables =
        serde_json::from_value(serde_json::json!({ "w": "x".repeat(limits().max_bytes) })).unwrap();
    let refused = budget.check_variables(&big).unwrap_err();
    assert!(
        matches!(refused, BudgetError::VariablesTooLong { bytes, limit } if bytes > limit),
        "{refused}"
    );
    assert!(
        refused.to_string().starts_with("the variables are "),
        "{refused}"
    );
}
