//! The tables declared once in `agentindex_indexer::schema` are the tables the migrations build,
//! on SQLite and on PostgreSQL alike: the same tables, the same columns in the same order, each
//! of the declared type, NULL where declared and only there, and the declared primary key. A
//! migration that adds, renames, retypes or reorders a column without its declaration (or the
//! other way round) fails here, naming the table and the column. The SQL of the store and of the
//! API names those tables through the declarations (`schema::agents::NAME`), not in its text;
//! the files that still spell a table are listed here until they are moved over.

use crate::support::postgres;
use agentindex_indexer::schema::{self, SqlType, Table, TableKind};
use agentindex_indexer::store::{Dialect, Store};
use sqlx::{AnyPool, Row};
use std::collections::BTreeMap;

/// One column as a migrated database describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Migrated {
    name: String,
    /// The declared type as the database spells it, upper case (empty in an FTS5 table).
    ty: String,
    nullable: bool,
}

/// A migrated database's tables: columns in order, and primary key columns in key order.
type Tables = BTreeMap<String, (Vec<Migrated>, Vec<String>)>;

/// The SQL type `ty` is spelled as on `dialect`.
fn spelled(ty: SqlType, dialect: Dialect) -> &'static str {
    match (ty, dialect) {
        (SqlType::Integer, Dialect::Sqlite) => "INTEGER",
        (SqlType::Real, Dialect::Sqlite) => "REAL",
        (SqlType::Text, Dialect::Sqlite) => "TEXT",
        (SqlType::Blob, Dialect::Sqlite) => "BLOB",
        (SqlType::Integer, Dialect::Postgres) => "BIGINT",
        (SqlType::Real, Dialect::Postgres) => "DOUBLE PRECISION",
        (SqlType::Text, Dialect::Postgres) => "TEXT",
        (SqlType::Blob, Dialect::Postgres) => "BYTEA",
    }
}

/// SQLite's tables, FTS5's own shadow tables and SQLite's and sqlx's bookkeeping left out.
async fn sqlite_tables(pool: &AnyPool) -> Tables {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name NOT LIKE '_sqlx_%' ORDER BY name",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let shadows = ["_config", "_content", "_data", "_docsize", "_idx"];
    let search_indexes: Vec<&str> = schema::ALL
        .iter()
        .filter(|t| is_search_index(t))
        .map(|t| t.name)
        .collect();
    let mut tables = Tables::new();
    for name in names {
        let shadow = search_indexes.iter().any(|index| {
            shadows
                .iter()
                .any(|suffix| name == format!("{index}{suffix}"))
        });
        if shadow {
            continue;
        }
        let rows = sqlx::query(&format!(
            "SELECT name, type, \"notnull\", pk FROM pragma_table_info('{name}') ORDER BY cid"
        ))
        .fetch_all(pool)
        .await
        .unwrap();
        let mut key: Vec<(i64, String)> = Vec::new();
        let columns = rows
            .iter()
            .map(|row| {
                let column: String = row.get(0);
                let (not_null, pk): (i64, i64) = (row.get(2), row.get(3));
                if pk > 0 {
                    key.push((pk, column.clone()));
                }
                Migrated {
                    ty: row.get::<String, _>(1).to_uppercase(),
                    // SQLite lets a non-integer key column hold NULL unless it says NOT NULL;
                    // every writer fills key columns, which the declarations say with their
                    // types, so a key column counts as NOT NULL here.
                    nullable: not_null == 0 && pk == 0,
                    name: column,
                }
            })
            .collect();
        key.sort();
        tables.insert(name, (columns, key.into_iter().map(|(_, c)| c).collect()));
    }
    tables
}

/// PostgreSQL's tables in the public schema.
async fn postgres_tables(pool: &AnyPool) -> Tables {
    let rows = sqlx::query(
        "SELECT table_name::text, column_name::text, upper(data_type)::text, is_nullable::text \
         FROM information_schema.columns WHERE table_schema = 'public' \
         AND table_name NOT LIKE '\\_sqlx\\_%' ORDER BY table_name, ordinal_position",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let mut tables = Tables::new();
    for row in rows {
        let table: String = row.get(0);
        tables.entry(table).or_default().0.push(Migrated {
            name: row.get(1),
            ty: row.get(2),
            nullable: row.get::<String, _>(3) == "YES",
        });
    }
    let keys = sqlx::query(
        "SELECT c.relname::text, a.attname::text FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) \
         WHERE i.indisprimary AND n.nspname = 'public' \
         ORDER BY c.relname, array_position(i.indkey::int2[], a.attnum)",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    for row in keys {
        let table: String = row.get(0);
        if let Some(entry) = tables.get_mut(&table) {
            entry.1.push(row.get(1));
        }
    }
    tables
}

/// Every difference between the declarations and `migrated`, one line each.
fn differences(migrated: &Tables, dialect: Dialect) -> Vec<String> {
    let mut found = Vec::new();
    for name in migrated.keys() {
        if schema::table(name).is_none() {
            found.push(format!(
                "{dialect:?}: table {name} is migrated but not declared"
            ));
        }
    }
    for table in schema::ALL {
        let Some((columns, key)) = migrated.get(table.name) else {
            found.push(format!(
                "{dialect:?}: table {} is declared but not migrated",
                table.name
            ));
            continue;
        };
        found.extend(column_differences(table, columns, dialect));
        let declared_key: Vec<&str> = table.key.to_vec();
        if *key != declared_key {
            found.push(format!(
                "{dialect:?}: {} has the key {key:?}, declared {declared_key:?}",
                table.name
            ));
        }
    }
    found
}

/// Whether `table` is migrated as a search index (an FTS5 table on SQLite, a tsvector beside its
/// columns on PostgreSQL); every other kind is an ordinary table on both.
fn is_search_index(table: &Table) -> bool {
    match table.kind {
        TableKind::SearchIndex => true,
        TableKind::Table | TableKind::KeptByTrigger => false,
    }
}

/// The tables the migrated triggers of `dialect` write: on SQLite the triggers' SQL, on
/// PostgreSQL the bodies of the functions its triggers run.
async fn tables_kept_by_triggers(pool: &AnyPool, dialect: Dialect) -> Vec<&'static str> {
    let sql = match dialect {
        Dialect::Sqlite => "SELECT sql FROM sqlite_master WHERE type = 'trigger'",
        Dialect::Postgres => {
            "SELECT p.prosrc::text FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid \
             WHERE NOT t.tgisinternal"
        }
    };
    let bodies: Vec<String> = sqlx::query_scalar(sql).fetch_all(pool).await.unwrap();
    let mut tables: Vec<&str> = bodies
        .iter()
        .flat_map(|body| tables_after(body, &["INTO", "UPDATE"]))
        .collect();
    tables.sort_unstable();
    tables.dedup();
    tables
}

/// A table the migrations' triggers write that is not declared as kept by them (copying an
/// index would write its rows twice), or the other way round (copying would leave it empty).
fn trigger_differences(kept: &[&str], dialect: Dialect) -> Vec<String> {
    let declared: Vec<&str> = schema::ALL
        .iter()
        .filter(|t| t.kind == TableKind::KeptByTrigger)
        .map(|t| t.name)
        .collect();
    let mut found = Vec::new();
    for table in kept.iter().filter(|t| !declared.contains(t)) {
        found.push(format!(
            "{dialect:?}: triggers write {table}, not declared as KeptByTrigger"
        ));
    }
    for table in declared.iter().filter(|t| !kept.contains(t)) {
        found.push(format!(
            "{dialect:?}: {table} is declared KeptByTrigger, but no trigger writes it"
        ));
    }
    found
}

fn column_differences(table: &Table, columns: &[Migrated], dialect: Dialect) -> Vec<String> {
    let search = is_search_index(table);
    // PostgreSQL's search index holds its tsvector beside the declared columns.
    let columns: Vec<&Migrated> = columns
        .iter()
        .filter(|c| !(search && dialect == Dialect::Postgres && c.ty == "TSVECTOR"))
        .collect();
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let declared: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
    if names != declared {
        return vec![format!(
            "{dialect:?}: {} has the columns {names:?}, declared {declared:?}",
            table.name
        )];
    }
    let mut found = Vec::new();
    for (column, declared) in columns.iter().zip(table.columns) {
        // An FTS5 table's columns have no types and no constraints.
        if search && dialect == Dialect::Sqlite {
            continue;
        }
        let ty = spelled(declared.ty, dialect);
        if column.ty != ty {
            found.push(format!(
                "{dialect:?}: {}.{} is {}, declared {ty}",
                table.name, column.name, column.ty
            ));
        }
        if column.nullable != declared.nullable {
            found.push(format!(
                "{dialect:?}: {}.{} {} NULL, declared otherwise",
                table.name,
                column.name,
                if column.nullable {
                    "may be"
                } else {
                    "may not be"
                }
            ));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_declared_tables_are_the_migrated_ones_on_both_databases() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(&format!(
        "sqlite://{}",
        dir.path().join("schema.db").display()
    ))
    .await
    .unwrap();
    let pg = Store::open(&postgres::server().fresh_database())
        .await
        .unwrap();
    let sqlite_tables = sqlite_tables(sqlite.reader()).await;
    let pg_tables = postgres_tables(pg.reader()).await;
    assert!(
        sqlite_tables.len() >= 40 && pg_tables.len() >= 40,
        "the migrations ran: {} and {} tables",
        sqlite_tables.len(),
        pg_tables.len()
    );
    let mut found = differences(&sqlite_tables, Dialect::Sqlite);
    found.extend(differences(&pg_tables, Dialect::Postgres));
    for (store, dialect) in [(&sqlite, Dialect::Sqlite), (&pg, Dialect::Postgres)] {
        let kept = tables_kept_by_triggers(store.reader(), dialect).await;
        found.extend(trigger_differences(&kept, dialect));
    }
    assert!(
        found.is_empty(),
        "schema::ALL against the migrations:\n{}",
        found.join("\n")
    );
    sqlite.close().await;
    pg.close().await;
}

/// The check above can fail: a migrated column the declarations lack, one they type or
/// key differently, an undeclared table, and a table written by triggers but not declared as
/// kept by them (or the other way round) are each named.
#[test]
fn a_difference_is_named() {
    let table = schema::chain_cursor::TABLE;
    let mut columns: Vec<Migrated> = table
        .columns
        .iter()
        .map(|c| Migrated {
            name: c.name.to_string(),
            ty: spelled(c.ty, Dialect::Postgres).to_string(),
            nullable: c.nullable,
        })
        .collect();
    let key = vec!["chain_id".to_string()];
    let mut migrated = Tables::new();
    migrated.insert(table.name.into(), (columns.clone(), key.clone()));
    let only_cursor = |found: Vec<String>| -> Vec<String> {
        found
            .into_iter()
            .filter(|line| !line.contains("declared but not migrated"))
            .collect()
    };
    assert!(only_cursor(differences(&migrated, Dialect::Postgres)).is_empty());

    columns[3].ty = "BIGINT".into();
    columns[2].nullable = true;
    migrated.insert(table.name.into(), (columns.clone(), vec![]));
    migrated.insert("stray".into(), (vec![], vec![]));
    let found = only_cursor(differences(&migrated, Dialect::Postgres));
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found
            .iter()
            .any(|l| l.contains("chain_cursor.indexed_hash is BIGINT"))
    );
    assert!(
        found
            .iter()
            .any(|l| l.contains("chain_cursor.indexed_block may be NULL"))
    );
    assert!(found.iter().any(|l| l.contains("has the key []")));
    assert!(
        found
            .iter()
            .any(|l| l.contains("stray is migrated but not declared"))
    );

    columns.pop();
    migrated.insert(table.name.into(), (columns, key));
    let found = only_cursor(differences(&migrated, Dialect::Postgres));
    assert!(
        found.iter().any(|l| l.contains("has the columns")),
        "{found:#?}"
    );

    let found = trigger_differences(&[schema::agent_skills::NAME], Dialect::Sqlite);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].contains("triggers write agent_skills, not declared"));
    assert!(found[1].contains("agent_terms is declared KeptByTrigger, but no trigger"));
    let kept = tables_after(
        "CREATE TRIGGER t AFTER UPDATE ON agent_skills BEGIN INSERT OR IGNORE INTO agent_terms",
        &["INTO", "UPDATE"],
    );
    assert_eq!(kept, [schema::agent_terms::NAME]);
}

/// The folders whose SQL names tables through the declarations.
const SQL_FOLDERS: &[&str] = &["api/src", "indexer/src/store"];

/// Files under [`SQL_FOLDERS`] that still spell declared tables in their SQL text, to be moved
/// onto the declarations (issue #31); a file not listed here that does fails the test below, and
/// so does a listed file that no longer does (strike it off). `migration_tests.rs` spells
/// tables in test fixtures of SQL machinery (a migration's effect), where the literal text is
/// the point.
const NOT_YET_DECLARED: &[&str] = &["indexer/src/store/migration_tests.rs"];

/// The declared tables a file's SQL names directly: a table name right after `FROM`, `JOIN`,
/// `INTO` or `UPDATE` and a space, outside a `//` comment (`FROM {}` with the name passed in is
/// the declared way).
fn tables_spelled_in(text: &str) -> Vec<&'static str> {
    tables_after(text, &["FROM", "JOIN", "INTO", "UPDATE"])
}

/// The declared tables named in `text` right after one of `keywords` and a space, outside a
/// `//` comment, in name order.
fn tables_after(text: &str, keywords: &[&str]) -> Vec<&'static str> {
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let words: Vec<&str> = code.split_whitespace().collect();
        for pair in words.windows(2) {
            let keyword = pair[0].trim_start_matches(|c: char| !identifier(c));
            if !keywords.contains(&keyword) {
                continue;
            }
            let name = pair[1].split(|c: char| !identifier(c)).next().unwrap_or("");
            if let Some(table) = schema::table(name) {
                found.push(table.name);
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// The `.rs` files under `folder`, at any depth.
fn rust_files(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn sql_names_tables_through_the_declarations() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for folder in SQL_FOLDERS {
        let found = rust_files(&root.join(folder));
        assert!(found.len() > 40, "read {folder}: {} files", found.len());
        files.extend(found);
    }
    files.sort();
    let mut wrong = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let spelled = tables_spelled_in(&std::fs::read_to_string(&path).unwrap());
        let pending = NOT_YET_DECLARED.contains(&relative.as_str());
        match (spelled.is_empty(), pending) {
            (false, false) => wrong.push(format!("{relative} spells {spelled:?}")),
            (true, true) => wrong.push(format!("{relative} is clean: strike it off the list")),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        tables_spelled_in(
            "let q = \"SELECT x FROM agents a JOIN payments p\";\n// FROM feedback\n\
             format!(\"SELECT 1 FROM {}\", feedback::NAME); (\"INSERT INTO documents (\")"
        ),
        ["agents", "documents", "payments"]
    );
}
