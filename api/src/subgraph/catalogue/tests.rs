//! Unit tests of the catalogue written per database: both databases answer the same schema,
//! each catalogue's SQL holds only its own database's constructs, and a field's SQL is what
//! each database should read.

use super::*;
use agentindex_indexer::schema::{
    agent_activity, agent_registration_text, agent_registrations, agents, events, feedback,
};

/// Every piece of SQL of `catalogue`, with where it is.
fn every_sql(catalogue: &Catalogue) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    for entity in &catalogue.entities {
        let mut add = |what: &str, sql: &'static str| {
            found.push((format!("{}.{what}", entity.name), sql));
        };
        add("from", entity.from);
        entity.keys.iter().for_each(|key| add("key", key));
        for field in entity.fields {
            add(field.name, field.sql);
            let optional = [
                field.compare,
                field.member,
                field.search,
                field.member_check,
                field.correlated,
            ];
            optional
                .into_iter()
                .flatten()
                .for_each(|sql| add(field.name, sql));
            field
                .id_parts
                .iter()
                .for_each(|part| add(field.name, part.sql));
            if let Some(walk) = field.walk {
                add(field.name, walk.from);
                add(field.name, walk.by);
            }
            match field.shape {
                Shape::Ref { keys, .. } => keys.iter().for_each(|key| add(field.name, key)),
                Shape::Derived { by, paging, .. } => {
                    by.iter().for_each(|key| add(field.name, key));
                    for link in paging.links {
                        add(field.name, link.parent);
                        add(field.name, link.child);
                    }
                }
                Shape::Scalar(_) | Shape::List(_) => {}
            }
        }
    }
    found
}

/// The schema a catalogue answers: every entity's names and every field's type.
fn schema_of(catalogue: &Catalogue) -> Vec<String> {
    catalogue
        .entities
        .iter()
        .flat_map(|entity| {
            let head = format!("{} {} {}", entity.name, entity.single, entity.plural);
            let fields = entity
                .fields
                .iter()
                .map(|field| format!("{}.{}: {}", entity.name, field.name, field.type_text()));
            std::iter::once(head).chain(fields)
        })
        .collect()
}

#[test]
fn both_databases_answer_the_same_schema() {
    let sqlite = schema_of(of(Dialect::Sqlite));
    assert_eq!(sqlite, schema_of(of(Dialect::Postgres)));
    assert_eq!(of(Dialect::Sqlite).entities.len(), 18);
    assert!(sqlite.contains(&"Agent.registrationFile: AgentRegistrationFile".to_string()));
    assert!(sqlite.contains(&"FeedbackPoint.timestamp: Timestamp".to_string()));
    assert!(sqlite.contains(&"ProtocolAgentStats.agentRegistrations: Int8".to_string()));
    let aggregations: Vec<&str> = of(Dialect::Sqlite)
        .entities
        .iter()
        .filter(|entity| entity.is_aggregation())
        .map(|entity| entity.name)
        .collect();
    assert_eq!(
        aggregations,
        [
            "ProtocolAgentStats",
            "ProtocolFeedbackStats",
            "AgentFeedbackStats",
            "ProtocolValidationStats",
            "AgentValidationStats"
        ]
    );
    assert!(sqlite.contains(&"Agent.feedback: [Feedback!]!".to_string()));
}

#[test]
fn aggregations_are_only_read_as_root_lists() {
    // Only a root list fills an aggregation's `$INTERVAL` and `$CURRENT` (`statements::list`):
    // no reference or derived list may lead to one.
    let catalogue = of(Dialect::Sqlite);
    for entity in &catalogue.entities {
        for field in entity.fields {
            let target = match field.shape {
                Shape::Ref { entity, .. } | Shape::Derived { entity, .. } => entity,
                _ => continue,
            };
            let aggregation = catalogue.entity(target).is_some_and(|t| t.is_aggregation());
            assert!(
                !aggregation,
                "{}.{} leads to {target}",
                entity.name, field.name
            );
        }
    }
}

#[test]
fn each_catalogue_holds_only_its_own_databases_sql() {
    let sqlite_only = [
        "json_array(",
        "json_group_array(",
        "json_extract(",
        "json_each(",
        "json(",
        "hex(",
        "max(a",
        "max(coalesce",
        "instr(",
        " MATCH ",
        "INDEXED BY",
        "CROSS JOIN",
    ];
    for (at, sql) in every_sql(of(Dialect::Postgres)) {
        for construct in sqlite_only {
            assert!(
                !sql.contains(construct),
                "{at} on PostgreSQL: {construct} in {sql}"
            );
        }
    }
    let postgres_only = [
        "jsonb",
        "json_build_array(",
        "GREATEST(",
        "encode(",
        "strpos(",
        "ILIKE",
        "#>>",
        "COLLATE",
    ];
    for (at, sql) in every_sql(of(Dialect::Sqlite)) {
        for construct in postgres_only {
            assert!(
                !sql.contains(construct),
                "{at} on SQLite: {construct} in {sql}"
            );
        }
    }
}

/// The SQL of `entity`'s field `field` on `dialect`.
fn sql_of(dialect: Dialect, entity: &str, field: &str) -> &'static str {
    of(dialect)
        .entity(entity)
        .unwrap()
        .field(field)
        .unwrap()
        .sql
}

#[test]
fn an_agents_last_activity_is_the_larger_of_two_times_on_each_database() {
    let feedback_time = |hint: &str| {
        format!(
            "coalesce((SELECT max(f.timestamp) FROM {} f{hint} WHERE f.chain_id = a.chain_id AND f.registry = a.registry AND f.token_id = a.token_id), 0)",
            feedback::NAME
        )
    };
    assert_eq!(
        sql_of(Dialect::Sqlite, "Agent", "lastActivity"),
        format!(
            "max(a.registered_at, {})",
            feedback_time(" INDEXED BY feedback_agent")
        )
    );
    assert_eq!(
        sql_of(Dialect::Postgres, "Agent", "lastActivity"),
        format!("GREATEST(a.registered_at, {})", feedback_time(""))
    );
}

#[test]
fn an_agents_update_time_is_the_one_its_activity_row_keeps_and_orders_by_its_index() {
    let activity = agent_activity::NAME;
    let updated =
        |key: &str| format!("(SELECT u.updated_at FROM {activity} u WHERE u.agent_key = {key})");
    // The same on both: the two keys share PostgreSQL's `COLLATE "C"`, so either index serves.
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        assert_eq!(
            sql_of(dialect, "Agent", "updatedAt"),
            updated("a.agent_key")
        );
    }
    let walk = |dialect| {
        of(dialect)
            .entity("Agent")
            .unwrap()
            .field("updatedAt")
            .unwrap()
            .walk
            .unwrap()
    };
    let from = |hint: &str, join: &str, key: &str| {
        format!(
            "FROM {activity} u{hint} {join} {} a ON a.agent_key = {key} WHERE a.source = 'erc8004'",
            agents::NAME
        )
    };
    assert_eq!(
        walk(Dialect::Sqlite).from,
        from(
            " INDEXED BY agent_activity_updated",
            "CROSS JOIN",
            "u.agent_key"
        )
    );
    assert_eq!(
        walk(Dialect::Postgres).from,
        from("", "JOIN", "u.agent_key")
    );
    assert_eq!(walk(Dialect::Sqlite).by, "u.updated_at");
    // No other field has a walk.
    let walks = of(Dialect::Sqlite)
        .entities
        .iter()
        .flat_map(|entity| entity.fields.iter().filter(|f| f.walk.is_some()))
        .count();
    assert_eq!(walks, 1);
}

#[test]
fn json_and_hex_are_each_databases_own() {
    // A path in a stored JSON document.
    assert_eq!(
        sql_of(Dialect::Sqlite, "FeedbackFile", "proofOfPaymentChainId"),
        "CAST(json_extract(d.projection, '$.proof_of_payment.chain_id') AS TEXT)"
    );
    assert_eq!(
        sql_of(Dialect::Postgres, "FeedbackFile", "proofOfPaymentChainId"),
        "CAST(((d.projection)::jsonb #>> '{proof_of_payment,chain_id}') AS TEXT)"
    );
    assert_eq!(
        sql_of(Dialect::Postgres, "FeedbackFile", "a2aSkills"),
        "coalesce(((d.projection)::jsonb #>> '{a2a_skills}'), '[]')"
    );
    // Bytes as lower-case hex.
    assert_eq!(
        sql_of(Dialect::Sqlite, "AgentMetadata", "value"),
        "'0x' || lower(hex(m.value))"
    );
    assert_eq!(
        sql_of(Dialect::Postgres, "AgentMetadata", "value"),
        "'0x' || encode(m.value, 'hex')"
    );
    // Rows aggregated into a JSON array, `[]` when there are none.
    assert_eq!(
        sql_of(Dialect::Postgres, "Protocol", "agents"),
        format!(
            "(SELECT coalesce(jsonb_agg(a.chain_id || ':' || a.token_id), '[]'::jsonb) FROM {} a WHERE a.chain_id = c.chain_id AND a.source = 'erc8004')",
            agents::NAME
        )
    );
    assert!(
        sql_of(Dialect::Sqlite, "AgentRegistrationFile", "a2aSkills")
            .starts_with("(SELECT json_group_array(k.skill) FROM ")
    );
    assert!(
        sql_of(Dialect::Sqlite, "FeedbackResponse", "id")
            .contains("':0x' || lower(hex(e.tx_hash)) || ':'")
    );
    assert!(
        sql_of(Dialect::Postgres, "FeedbackResponse", "id")
            .contains("':0x' || encode(e.tx_hash, 'hex') || ':'")
    );
    assert!(
        sql_of(Dialect::Postgres, "Agent", "registrationFile").contains(&format!(
            "'0x' || encode((SELECT e.tx_hash FROM {} e WHERE ",
            events::NAME
        ))
    );
}

#[test]
fn a_registration_files_text_is_searched_by_each_databases_trigram_index() {
    let search = |dialect| {
        of(dialect)
            .entity("AgentRegistrationFile")
            .unwrap()
            .field("name")
            .unwrap()
            .search
            .unwrap()
    };
    let names = |test: &str| {
        format!(
            "g.agent_key IN (SELECT x.agent_key FROM {} x WHERE x.name {test} ?)",
            agent_registration_text::NAME
        )
    };
    assert_eq!(search(Dialect::Sqlite), names("MATCH"));
    assert_eq!(search(Dialect::Postgres), names("ILIKE"));
    // The registration file is read before its agent, in that order on both.
    let from = |dialect| of(dialect).entity("AgentRegistrationFile").unwrap().from;
    let joined = |join: &str| {
        format!(
            "FROM {} g {join} {} a ON a.agent_key = g.agent_key WHERE a.source = 'erc8004'",
            agent_registrations::NAME,
            agents::NAME
        )
    };
    assert_eq!(from(Dialect::Sqlite), joined("CROSS JOIN"));
    assert_eq!(from(Dialect::Postgres), joined("JOIN"));
}

/// A reference read through `correlated` in its parent's row is null when that row's id is
/// (`statements::Columns`), which holds because its own SQL is that id read the same way: the
/// target's `id` SQL, from the rows `correlated` reads (which may add a test of the parent's).
#[test]
fn a_reference_read_in_its_parent_row_is_its_target_id() {
    for dialect in [Dialect::Sqlite, Dialect::Postgres] {
        let catalogue = of(dialect);
        let mut correlated = 0;
        for entity in &catalogue.entities {
            for field in entity.fields {
                let (Some(from), Shape::Ref { entity: target, .. }) =
                    (field.correlated, field.shape)
                else {
                    continue;
                };
                correlated += 1;
                let target = catalogue.entity(target).unwrap();
                let rows = field
                    .sql
                    .strip_prefix(&format!("(SELECT {} ", target.id().sql))
                    .and_then(|rest| rest.strip_suffix(')'))
                    .unwrap_or_else(|| {
                        panic!("{}.{} is not its target's id", entity.name, field.name)
                    });
                assert!(
                    from.starts_with(rows),
                    "{}.{}: {from}",
                    entity.name,
                    field.name
                );
            }
        }
        assert_eq!(correlated, 1, "registrationFile");
    }
}
