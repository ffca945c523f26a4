//! Unit tests of the filter compiler: how keys split into fields and operators, graph-node's wording for
//! what it refuses, which clauses find rows and which test them, and ids compared part by part.

use super::*;
use crate::subgraph::catalogue::entity;
use crate::subgraph::sql::Bind;

fn filter(json: serde_json::Value) -> ConstValue {
    ConstValue::from_json(json).expect("a filter")
}

#[test]
fn keys_split_into_field_and_operator() {
    let agent = entity("Agent").unwrap();
    assert_eq!(
        split(agent, "owner_in").map(|(f, o)| (f.name, o)),
        Some(("owner", "_in"))
    );
    assert_eq!(
        split(agent, "registrationFile_not").map(|(f, o)| (f.name, o)),
        Some(("registrationFile", "_not"))
    );
    assert_eq!(
        split(agent, "registrationFile_").map(|(f, o)| (f.name, o)),
        Some(("registrationFile", "_"))
    );
    assert_eq!(
        split(agent, "operators_contains").map(|(f, o)| (f.name, o)),
        Some(("operators", "_contains"))
    );
    assert!(split(agent, "nothing_in").is_none());
}

#[test]
fn unknown_keys_are_refused_in_graph_node_words() {
    let agent = entity("Agent").unwrap();
    let error = condition(agent, &filter(serde_json::json!({ "colour": "red" })))
        .unwrap_err()
        .to_string();
    assert_eq!(error, "Type `Agent_filter` has no field `colour`");
    let error = condition(
        agent,
        &filter(serde_json::json!({ "registrationFile_": { "hasWings": true } })),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "Type `AgentRegistrationFile_filter` has no field `hasWings`"
    );
    // An operator a type does not have is an unknown field too.
    let error = condition(
        agent,
        &filter(serde_json::json!({ "owner_gt_nocase": "x" })),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(error, "Type `Agent_filter` has no field `owner_gt_nocase`");
}

#[test]
fn the_narrowest_clause_finds_rows_and_the_others_test_them() {
    let agent = entity("Agent").unwrap();
    // A name search finds a handful; the skill list (every agent with the skill) is only
    // checked for those, row by row.
    let sql = condition(
        agent,
        &filter(serde_json::json!({ "and": [
            { "registrationFile_": { "name_contains_nocase": "weather" } },
            { "or": [ { "registrationFile_": { "a2aSkills_contains": ["forecast"] } } ] }
        ]})),
    )
    .unwrap();
    assert!(sql.text.contains("MATCH ?"), "{}", sql.text);
    assert!(
        sql.text
            .contains("EXISTS (SELECT 1 FROM agent_registrations g"),
        "{}",
        sql.text
    );
    assert!(!sql.text.contains("agent_terms"), "{}", sql.text);
    // The skill alone is the best there is: it finds.
    let sql = condition(
        agent,
        &filter(serde_json::json!({
            "registrationFile_": { "a2aSkills_contains": ["forecast"] }, "createdAt_gt": 5
        })),
    )
    .unwrap();
    assert!(sql.text.contains("agent_terms"), "{}", sql.text);
    // A short piece of text has no trigram to look up: every name is read.
    let sql = condition(
        agent,
        &filter(serde_json::json!({ "registrationFile_": { "name_contains_nocase": "ab" } })),
    )
    .unwrap();
    assert!(!sql.text.contains("MATCH"), "{}", sql.text);
}

#[test]
fn ids_compare_part_by_part() {
    let agent = entity("Agent").unwrap();
    let sql = condition(
        agent,
        &filter(serde_json::json!({ "id_in": ["31337:7", "nonsense", "x:1"] })),
    )
    .unwrap();
    assert_eq!(sql.binds, vec![Bind::Int(31337), Bind::Text("7".into())]);
    assert!(
        sql.text.contains("a.chain_id = ? AND a.token_id = ?"),
        "{}",
        sql.text
    );
}

#[test]
fn values_bind_in_order() {
    let agent = entity("Agent").unwrap();
    let sql = condition(
        agent,
        &filter(serde_json::json!({
            "owner_in": ["0xAA", "0xbb"],
            "createdAt_gte": 5,
            "registrationFile_not": null,
        })),
    )
    .unwrap();
    // serde_json's maps keep keys sorted: createdAt_gte comes first.
    assert_eq!(
        sql.binds,
        vec![Bind::Int(5), Bind::Text(r#"["0xaa","0xbb"]"#.into())]
    );
    assert!(sql.text.contains("IS NOT NULL"));
}

#[test]
fn lists_past_the_cap_are_refused_naming_the_filter() {
    let agent = entity("Agent").unwrap();
    let owners: Vec<String> = (0..4).map(|n| format!("0x{n:040x}")).collect();
    let asked = filter(serde_json::json!({ "owner_in": owners }));
    assert!(with_list_cap(4, || condition(agent, &asked)).is_ok());
    let error = with_list_cap(3, || condition(agent, &asked)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Filter `owner_in` of `Agent_filter` has 4 items; at most 3 are accepted"
    );
    let ors = filter(serde_json::json!({ "or": [{}, {}, {}, {}] }));
    assert!(with_list_cap(3, || condition(agent, &ors)).is_err());
}
