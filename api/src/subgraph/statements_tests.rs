//! Unit tests of `statements.rs`: each database's statement for a root list, a page per parent
//! and referenced rows, its one column read as text, and a substring search bound as each
//! database's pattern.

use super::*;
use crate::subgraph::plan::first_list;
use agentindex_indexer::schema::{agent_registrations, agents, feedback};

#[test]
fn a_root_list_is_written_for_postgres_with_its_column_as_text() {
    let query = "{ agents(first: 2, skip: 1, where: { owner: \"0xAA\" }) {
        id operators registrationFile { id } feedback(first: 1) { id } } }";
    let list = first_list(Dialect::Postgres, query);
    let sql = super::list(Dialect::Postgres, &list, Some(5));
    assert!(
        sql.text.starts_with(
            "SELECT CAST(json_build_array(NULL, json_build_array(a.agent_key), \
             a.chain_id || ':' || a.token_id, (a.operators)::jsonb, \
             (SELECT json_build_array('0x' || encode("
        ),
        "{}",
        sql.text
    );
    let id = "a.chain_id || ':' || a.token_id";
    let agents = agents::NAME;
    // The registration file is read in the agent's own row, its id first.
    let registrations = agent_registrations::NAME;
    assert!(
        sql.text.ends_with(&format!(
            ", json_build_array(g.agent_key)) FROM {registrations} g \
             WHERE g.agent_key = a.agent_key AND a.source = 'erc8004' LIMIT 1), \
             json_build_array(a.chain_id, a.registry, a.token_id)) AS TEXT) \
             FROM {agents} a WHERE a.source = 'erc8004' AND a.agent_key = ANY(ARRAY(SELECT a.agent_key \
             FROM {agents} a WHERE a.source = 'erc8004' AND +a.chain_id = ? AND (true AND (a.owner = ?)) \
             ORDER BY {id} ASC LIMIT ? OFFSET ?)) ORDER BY {id} ASC"
        )),
        "{}",
        sql.text
    );
    assert_eq!(
        sql.binds,
        vec![
            Bind::Int(5),
            Bind::Text("0xaa".into()),
            Bind::Int(2),
            Bind::Int(1)
        ]
    );
    let numbered = Dialect::Postgres.statement(&sql.text);
    assert!(numbered.contains("+a.chain_id = $1 AND (true AND (a.owner = $2))"));
    assert!(numbered.ends_with(&format!("LIMIT $3 OFFSET $4)) ORDER BY {id} ASC")));
    // SQLite's is the same statement in its own SQL.
    let list = first_list(Dialect::Sqlite, query);
    let sqlite = super::list(Dialect::Sqlite, &list, Some(5));
    assert!(
        sqlite.text.starts_with(
            "SELECT json_array(NULL, json_array(a.agent_key), a.chain_id || ':' || a.token_id, \
             json(a.operators), (SELECT json_array('0x' || lower(hex("
        ),
        "{}",
        sqlite.text
    );
    // SQLite reads the page's keys with `IN`, through the key's index already.
    assert!(
        sqlite.text.contains(&format!(
            "FROM {agents} a WHERE a.source = 'erc8004' AND (a.agent_key) IN (SELECT a.agent_key "
        )),
        "{}",
        sqlite.text
    );
    assert_eq!(sqlite.binds, sql.binds);
}

#[test]
fn a_page_per_parent_names_its_index_on_sqlite_only() {
    let query = "{ agents { id feedback(first: 3, orderBy: createdAt) { id } } }";
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let list = first_list(dialect, query);
        let Some(What::Derived(field, derived)) = list.items.last().map(|item| &item.what) else {
            panic!("a derived list last")
        };
        let Shape::Derived { paging, .. } = field.shape else {
            panic!("a derived field")
        };
        let parent = vec![
            Bind::Int(1),
            Bind::Text("0xr".into()),
            Bind::Text("7".into()),
        ];
        let sql = pages(dialect, derived, paging, &[("p".into(), parent)], 10);
        let (head, array, table) = match dialect {
            Dialect::Sqlite => (
                "SELECT row FROM (",
                "json_array(0, json_array(",
                format!(
                    "FROM {} f INDEXED BY feedback_agent_time JOIN ",
                    feedback::NAME
                ),
            ),
            Dialect::Postgres => (
                "SELECT CAST(row AS TEXT) FROM (",
                "json_build_array(0, json_build_array(",
                format!("FROM {} f JOIN ", feedback::NAME),
            ),
        };
        assert!(
            sql.text
                .starts_with(&format!("{head}SELECT * FROM (SELECT {array}f.chain_id, ")),
            "{}",
            sql.text
        );
        assert!(sql.text.contains(&table), "{}", sql.text);
        assert!(
            sql.text.contains(
                "AND f.chain_id = ? AND f.registry = ? AND f.token_id = ? AND true ORDER BY"
            ),
            "{}",
            sql.text
        );
        assert!(
            sql.text
                .ends_with(") AS page0) AS pages ORDER BY pages.o0 ASC, pages.o1 ASC LIMIT ?"),
            "{}",
            sql.text
        );
        assert_eq!(sql.binds.len(), 3 + 2 + 1);
    }
}

#[test]
fn referenced_rows_are_found_by_their_keys_as_each_database_reads_json() {
    let key = serde_json::json!(["1:0xr:7"]);
    let agent = |dialect| catalogue::of(dialect).entity("Agent").unwrap();
    let agents = agents::NAME;
    let sqlite = referenced(Dialect::Sqlite, agent(Dialect::Sqlite), &[], &[&key]);
    assert_eq!(
        sqlite.text,
        format!(
            "SELECT json_array(NULL, json_array(a.agent_key)) FROM {agents} a WHERE a.source = 'erc8004' \
             AND (a.agent_key) IN (SELECT json_extract(j.value, '$[0]') FROM json_each(?) j)"
        )
    );
    let postgres = referenced(Dialect::Postgres, agent(Dialect::Postgres), &[], &[&key]);
    assert_eq!(
        postgres.text,
        format!(
            "SELECT CAST(json_build_array(NULL, json_build_array(a.agent_key)) AS TEXT) FROM {agents} a \
             WHERE a.source = 'erc8004' AND jsonb_build_array(a.agent_key) IN \
             (SELECT j.value FROM jsonb_array_elements(CAST(? AS jsonb)) j)"
        )
    );
    assert_eq!(sqlite.binds, vec![Bind::Text(r#"[["1:0xr:7"]]"#.into())]);
    assert_eq!(postgres.binds, sqlite.binds);
}

#[test]
fn a_substring_search_binds_each_databases_pattern() {
    let query = "{ agentRegistrationFiles(where: { name_contains: \"50%_x\" }) { id } }";
    let search = |dialect| {
        let list = first_list(dialect, query);
        super::list(dialect, &list, None)
    };
    let sqlite = search(Dialect::Sqlite);
    assert!(sqlite.text.contains("x.name MATCH ?"), "{}", sqlite.text);
    assert_eq!(sqlite.binds[0], Bind::Text("\"50%_x\"".into()));
    let postgres = search(Dialect::Postgres);
    assert!(
        postgres.text.contains("x.name ILIKE ?"),
        "{}",
        postgres.text
    );
    assert_eq!(postgres.binds[0], Bind::Text("%50\\%\\_x%".into()));
    // Every other value is bound alike.
    assert_eq!(sqlite.binds[1..], postgres.binds[1..]);
}

#[test]
fn a_single_entity_is_read_by_its_id_parts() {
    let entity = catalogue::of(Dialect::Postgres).entity("Agent").unwrap();
    let sql = single(Dialect::Postgres, entity, "31337:7", &[], None).unwrap();
    assert_eq!(
        sql.text,
        format!(
            "SELECT CAST(json_build_array(NULL, json_build_array(a.agent_key)) AS TEXT) FROM {} a \
             WHERE a.source = 'erc8004' AND (true AND ((false OR (true AND a.chain_id = ? AND a.token_id = ?)))) LIMIT 1",
            agents::NAME
        )
    );
    assert_eq!(sql.binds, vec![Bind::Int(31337), Bind::Text("7".into())]);
}
