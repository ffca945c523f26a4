//! Unit tests of the filter compiler: how keys split into fields and operators, graph-node's wording for
//! what it refuses, which clauses find rows and which test them, and ids compared part by part.

use super::*;
use crate::subgraph::catalogue;
use crate::subgraph::sql::Bind;
use agentindex_indexer::schema::{agent_a2a_skills, agent_registrations};
use agentindex_indexer::store::Dialect;

/// The catalogue written for SQLite.
fn sqlite() -> &'static Catalogue {
    catalogue::of(Dialect::Sqlite)
}

/// The entity `name` of the catalogue written for SQLite.
fn entity(name: &str) -> Option<&'static Entity> {
    sqlite().entity(name)
}

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
    let error = condition(
        sqlite(),
        agent,
        &filter(serde_json::json!({ "colour": "red" })),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(error, "Type `Agent_filter` has no field `colour`");
    let error = condition(
        sqlite(),
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
        sqlite(),
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
        sqlite(),
        agent,
        &filter(serde_json::json!({ "and": [
            { "registrationFile_": { "name_contains_nocase": "weather" } },
            { "or": [ { "registrationFile_": { "a2aSkills_contains": ["forecast"] } } ] }
        ]})),
    )
    .unwrap();
    assert!(sql.text.contains("MATCH ?"), "{}", sql.text);
    let correlated = format!("EXISTS (SELECT 1 FROM {} g", agent_registrations::NAME);
    assert!(sql.text.contains(&correlated), "{}", sql.text);
    // The skill is tested on the agent's own rows, not looked up among everyone's.
    let lookup = format!("IN (SELECT s.agent_key FROM {} s", agent_a2a_skills::NAME);
    assert!(!sql.text.contains(&lookup), "{}", sql.text);
    // The skill alone is the best there is: it finds.
    let sql = condition(
        sqlite(),
        agent,
        &filter(serde_json::json!({
            "registrationFile_": { "a2aSkills_contains": ["forecast"] }, "createdAt_gt": 5
        })),
    )
    .unwrap();
    assert!(sql.text.contains(&lookup), "{}", sql.text);
    // A short piece of text has no trigram to look up: every name is read.
    let sql = condition(
        sqlite(),
        agent,
        &filter(serde_json::json!({ "registrationFile_": { "name_contains_nocase": "ab" } })),
    )
    .unwrap();
    assert!(!sql.text.contains("MATCH"), "{}", sql.text);
}

#[test]
fn an_or_of_one_item_is_written_as_that_item() {
    // The agent0 SDK wraps its skill filter in an `or` of one. Written as a conjunct,
    // PostgreSQL turns the skill's test into a join and may start from it (a skill no agent
    // holds ends the search at once); under an OR it is tested on every agent the name matches.
    let sdk = filter(serde_json::json!({ "and": [
        { "registrationFile_": { "name_contains_nocase": "weather" } },
        { "or": [ { "registrationFile_": { "a2aSkills_contains": ["forecast"] } } ] }
    ]}));
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let catalogue = catalogue::of(dialect);
        let agent = catalogue.entity("Agent").unwrap();
        let sql = condition(catalogue, agent, &sdk).unwrap();
        assert!(!sql.text.contains(" OR "), "{}", sql.text);
        assert!(sql.text.contains("s.skill = ?"), "{}", sql.text);
    }
    // Two items stay an OR.
    let agent = entity("Agent").unwrap();
    let sql = condition(
        sqlite(),
        agent,
        &filter(serde_json::json!({ "or": [ { "owner": "0x01" }, { "owner": "0x02" } ] })),
    )
    .unwrap();
    assert!(sql.text.contains(" OR "), "{}", sql.text);
}

#[test]
fn ids_compare_part_by_part() {
    let agent = entity("Agent").unwrap();
    let sql = condition(
        sqlite(),
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
        sqlite(),
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
    assert!(with_list_cap(4, || condition(sqlite(), agent, &asked)).is_ok());
    let error = with_list_cap(3, || condition(sqlite(), agent, &asked)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Filter `owner_in` of `Agent_filter` has 4 items; at most 3 are accepted"
    );
    let ors = filter(serde_json::json!({ "or": [{}, {}, {}, {}] }));
    assert!(with_list_cap(3, || condition(sqlite(), agent, &ors)).is_err());
}

/// The catalogue written for PostgreSQL.
fn postgres() -> &'static Catalogue {
    catalogue::of(Dialect::Postgres)
}

#[test]
fn each_database_gets_its_own_text_search_and_its_pattern_is_bound_as_such() {
    let asked = filter(serde_json::json!({
        "registrationFile_": { "name_contains_nocase": "50%_\"x" }
    }));
    // SQLite: an FTS5 trigram phrase, quotes doubled, then the exact test.
    let agent = entity("Agent").unwrap();
    let sql = condition(sqlite(), agent, &asked).unwrap();
    assert!(sql.text.contains("x.name MATCH ?"), "{}", sql.text);
    assert!(
        sql.text.contains("instr(lower(g.name), ?) > 0"),
        "{}",
        sql.text
    );
    assert_eq!(
        sql.binds,
        vec![
            Bind::Text("\"50%_\"\"x\"".into()),
            Bind::Text("50%_\"x".into())
        ]
    );
    // PostgreSQL: a trigram-indexed ILIKE of the piece as a LIKE pattern, escaped.
    let agent = postgres().entity("Agent").unwrap();
    let sql = condition(postgres(), agent, &asked).unwrap();
    assert!(sql.text.contains("x.name ILIKE ?"), "{}", sql.text);
    assert!(!sql.text.contains("MATCH"), "{}", sql.text);
    assert!(
        sql.text.contains("strpos(lower(g.name), ?) > 0"),
        "{}",
        sql.text
    );
    assert_eq!(
        sql.binds,
        vec![
            Bind::Text("%50\\%\\_\"x%".into()),
            Bind::Text("50%_\"x".into())
        ]
    );
}

#[test]
fn lists_of_values_are_json_of_each_database() {
    let asked = filter(serde_json::json!({
        "owner_in": ["0xaa"],
        "operators": ["0xbb"],
        "operators_contains": ["0xcc"],
    }));
    let agent = entity("Agent").unwrap();
    let sql = condition(sqlite(), agent, &asked).unwrap();
    for piece in [
        "a.owner IN (SELECT value FROM json_each(?))",
        "json(a.operators) = json(?)",
        "NOT EXISTS (SELECT 1 FROM json_each(?) w WHERE w.value NOT IN (SELECT h.value FROM json_each(a.operators) h))",
    ] {
        assert!(sql.text.contains(piece), "{piece} in {}", sql.text);
    }
    let agent = postgres().entity("Agent").unwrap();
    let pg = condition(postgres(), agent, &asked).unwrap();
    for piece in [
        "a.owner IN (SELECT value FROM jsonb_array_elements_text((?)::jsonb))",
        "(a.operators)::jsonb = (?)::jsonb",
        "NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text((?)::jsonb) w WHERE w.value NOT IN (SELECT h.value FROM jsonb_array_elements_text((a.operators)::jsonb) h))",
    ] {
        assert!(pg.text.contains(piece), "{piece} in {}", pg.text);
    }
    assert!(!pg.text.contains("json_each"), "{}", pg.text);
    assert_eq!(pg.binds, sql.binds);
}

#[test]
fn prefixes_and_suffixes_bind_their_length_as_an_integer_substr_takes() {
    let agent = entity("Agent").unwrap();
    for (key, length) in [
        (
            "agentURI_starts_with",
            "substr(a.uri, 1, CAST(? AS INTEGER)) = ?",
        ),
        (
            "agentURI_ends_with",
            "substr(a.uri, length(a.uri) + 1 - CAST(? AS INTEGER)) = ?",
        ),
    ] {
        let sql = condition(sqlite(), agent, &filter(serde_json::json!({ key: "ab" }))).unwrap();
        assert!(sql.text.contains(length), "{key}: {}", sql.text);
        assert_eq!(sql.binds, [Bind::Int(2), Bind::Text("ab".into())]);
    }
}

#[test]
fn a_filter_narrows_rows_when_a_clause_finds_them_by_an_index() {
    let agent = entity("Agent").unwrap();
    let narrows = |json| narrows(sqlite(), agent, &filter(json));
    assert!(!narrows(
        serde_json::json!({ "registrationFile_not": null })
    ));
    assert!(!narrows(
        serde_json::json!({ "agentURI_starts_with": "ipfs://" })
    ));
    assert!(!narrows(serde_json::json!(null)));
    assert!(narrows(serde_json::json!({ "owner": "0xaa" })));
    assert!(narrows(serde_json::json!({
        "registrationFile_not": null,
        "registrationFile_": { "name_contains_nocase": "agent 7" }
    })));
    assert!(narrows(
        serde_json::json!({ "and": [{ "id_in": ["1:2"] }] })
    ));
    // An `or` narrows only when each of its items does.
    assert!(!narrows(serde_json::json!({ "or": [
        { "owner": "0xaa" }, { "agentURI_starts_with": "ipfs://" }
    ] })));
}
