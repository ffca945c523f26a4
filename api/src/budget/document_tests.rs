//! Unit tests of `document.rs`: an exponential fan-out of fragments is measured in a number of
//! steps linear in the document and refused; cycles, depth through remembered fragments, width
//! and expanded aliases are refused; every document the agent0 SDK sends passes.

use super::*;
use async_graphql::parser::parse_query;

fn measure(text: &str) -> Result<Measure, BudgetError> {
    check(&parse_query(text).unwrap(), &QueryLimitsConfig::default())
}

/// `{ ...F0 }` where each `Fi` spreads `Fi+1` twice and the last asks one field: 2^`levels`
/// fields once expanded, in a few hundred bytes.
pub(crate) fn fan_out(levels: usize) -> String {
    let mut text = String::from("query { ...F0 }\n");
    for level in 0..levels {
        let next = level + 1;
        text += &format!("fragment F{level} on Query {{ ...F{next} ...F{next} }}\n");
    }
    text += &format!("fragment F{levels} on Query {{ __typename }}\n");
    text
}

/// `{ ...F0 }` where each `Fi` asks `x` and `y`, each spreading `Fi+1`: 2^`levels` fields
/// spread over the levels instead of merged into one.
fn deep_fan_out(levels: usize) -> String {
    let mut text = String::from("query { ...F0 }\n");
    for level in 0..levels {
        let next = level + 1;
        text +=
            &format!("fragment F{level} on Query {{ x {{ ...F{next} }} y {{ ...F{next} }} }}\n");
    }
    text += &format!("fragment F{levels} on Query {{ __typename }}\n");
    text
}

/// The walk over the operation of `text`, stopped at its first refusal, with its step count.
fn walk_of(text: &str) -> (BudgetError, usize) {
    let document = parse_query(text).unwrap();
    let limits = QueryLimitsConfig::default();
    let mut walk = Walk {
        document: &document,
        limits: &limits,
        fragments: HashMap::new(),
        steps: 0,
    };
    let operation = document.operations.iter().next().unwrap().1;
    let error = walk.set(&operation.node.selection_set, 1).unwrap_err();
    (error, walk.steps)
}

#[test]
fn a_fan_out_of_fragments_is_refused_in_steps_linear_in_the_document() {
    // Merged into one level: 2^25 fields at the operation's root.
    let text = fan_out(25);
    assert!(text.len() < 1_200, "{} bytes", text.len());
    let (error, steps) = walk_of(&text);
    assert!(
        matches!(
            error,
            BudgetError::TooWide {
                fields: 256,
                limit: 200,
                ..
            }
        ),
        "{error:?}"
    );
    // One operation selection and two spreads in each fragment measured, at most: each
    // fragment is walked once, not once per spread.
    assert!(steps <= 1 + 2 * 25 + 1, "{steps} steps");
    assert_eq!(
        error.subgraph_message(),
        "query asks for `256` fields in one selection set and thereby exceeds the limit of `200`"
    );

    // Spread over 29 levels: 2^15 fields, none of the levels wide.
    let (error, steps) = walk_of(&deep_fan_out(14));
    assert_eq!(error, BudgetError::TooManySelections { limit: 2_000 });
    assert!(steps <= 1 + 4 * 14 + 1, "{steps} steps");
    assert_eq!(
        error.subgraph_message(),
        "query has more than `2000` selections once its fragments are expanded and thereby exceeds the limit of `2000`"
    );
}

#[test]
fn a_small_fan_out_is_measured_exactly() {
    // 2^7 = 128 fields, 2^8 - 1 = 255 spreads, and 9 levels.
    let measured = measure(&fan_out(7)).unwrap();
    assert_eq!(measured.expanded.selections, 128 + 255);
    assert_eq!(measured.expanded.depth, 9);
    assert!(measured.steps <= 1 + 2 * 7 + 1, "{} steps", measured.steps);
    // 2^5 `__typename`, 2 * (2^5 - 1) `x` and `y`, 2^6 - 1 spreads; 1 + 2 * 5 + 1 levels.
    let measured = measure(&deep_fan_out(5)).unwrap();
    assert_eq!(measured.expanded.selections, 32 + 62 + 63);
    assert_eq!(measured.expanded.depth, 12);
}

#[test]
fn a_fragment_spreading_itself_is_refused() {
    let error = measure("{ ...A } fragment A on Query { ...B } fragment B on Query { id ...A }")
        .unwrap_err();
    assert!(
        matches!(&error, BudgetError::FragmentCycle { name, .. } if name == "A"),
        "{error:?}"
    );
    assert_eq!(
        error.subgraph_message(),
        "query has fragment cycle including `A`"
    );
    // A cycle in a fragment no operation spreads is refused too.
    assert!(matches!(
        measure("{ id } fragment A on Query { ...A }"),
        Err(BudgetError::FragmentCycle { .. })
    ));
}

#[test]
fn depth_counts_through_a_remembered_fragment() {
    // D's set and a's and b's are 3 levels; measured first at the root, then spread where its
    // set is at level 31.
    let nested = "x { ".repeat(29);
    let closing = "}".repeat(29);
    let text =
        format!("{{ ...D {nested} ...D {closing} }} fragment D on Query {{ a {{ b {{ c }} }} }}");
    let error = measure(&text).unwrap_err();
    assert!(
        matches!(error, BudgetError::TooDeep { limit: 32, .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("nested too deep"), "{error}");
    // Two levels higher it fits: 31 levels in all.
    let nested = "x { ".repeat(27);
    let closing = "}".repeat(27);
    let text =
        format!("{{ ...D {nested} ...D {closing} }} fragment D on Query {{ a {{ b {{ c }} }} }}");
    assert_eq!(measure(&text).unwrap().expanded.depth, 31);
}

#[test]
fn aliases_are_counted_once_per_expansion() {
    let aliases: String = (0..10).map(|i| format!("a{i}: id ")).collect();
    let text = format!("{{ ...A ...A ...A ...A }} fragment A on Query {{ {aliases} }}");
    assert_eq!(
        measure(&text).unwrap_err().to_string(),
        "the query uses 40 aliases; at most 30 are allowed"
    );
    let text = format!("{{ ...A ...A ...A }} fragment A on Query {{ {aliases} }}");
    assert_eq!(measure(&text).unwrap().expanded.aliases, 30);
}

#[test]
fn a_level_is_as_wide_as_its_fields_and_its_fragments_fields() {
    let fields = "id ".repeat(150);
    let text = format!("{{ agent {{ {fields} ...A }} }} fragment A on Agent {{ {fields} }}");
    let error = measure(&text).unwrap_err();
    assert!(
        matches!(
            error,
            BudgetError::TooWide {
                fields: 300,
                limit: 200,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn every_document_the_agent0_sdk_sends_fits_with_room() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/agent0/documents.json"
    );
    let documents: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(
        documents.len() >= 10,
        "the fixture holds the SDK's documents"
    );
    let limits = QueryLimitsConfig::default();
    for entry in &documents {
        let text = entry.split(" | variables:").next().unwrap();
        let counts = crate::budget::lexical::check(text, &limits).unwrap();
        let measure = measure(text).unwrap();
        // A quarter of each limit at most: room for the SDK to grow.
        assert!(counts.tokens * 4 <= limits.max_tokens, "{counts:?}: {text}");
        assert!(
            counts.nesting * 4 <= limits.max_nesting,
            "{counts:?}: {text}"
        );
        assert!(
            measure.expanded.selections * 4 <= limits.max_expanded_selections,
            "{measure:?}: {text}"
        );
    }
}
