//! The subgraph's SQL for PostgreSQL. The catalogue and the executor write SQLite's SQL (its
//! JSON functions, `hex`, the two-argument `max`, FTS5 trigram `MATCH`); this rewrites a
//! finished statement into PostgreSQL's, function by function, so the catalogue stays one table:
//!
//! | SQLite | PostgreSQL |
//! |---|---|
//! | `json_array(…)` | `json_build_array(…)` |
//! | `json_group_array(x)` | `coalesce(jsonb_agg(x), '[]'::jsonb)` |
//! | `json(x)` | `(x)::jsonb` |
//! | `json_extract(x, '$.a.b')` | `((x)::jsonb #>> '{a,b}')` |
//! | `json_each(x)` (its `value`) | `jsonb_array_elements_text((x)::jsonb)` |
//! | `hex(x)` | `encode(x, 'hex')` |
//! | `max(a, b, …)`, `min(a, b, …)` | `GREATEST(a, b, …)`, `LEAST(a, b, …)` |
//! | `instr(h, n)` | `strpos(h, n)` |
//! | `x MATCH ?` (an FTS5 phrase) | `x ILIKE ?` (the phrase as `%…%`, a trigram index's query) |
//! | `INDEXED BY i`, `?` | dropped, `$1`… (as the store's `Dialect` does) |
//!
//! The statement's one column (a JSON array per row) is cast to text, which both drivers read.

use super::sql::{Bind, Sql};
use agentindex_indexer::store::Dialect;

/// `sql` in PostgreSQL's SQL, its binds adjusted where a construct binds differently.
pub(crate) fn render(sql: Sql) -> Sql {
    let mut binds = sql.binds;
    let text = rewrite(&sql.text, &mut binds);
    let text = Dialect::Postgres.statement(&text);
    Sql {
        text: as_text(&text),
        binds,
    }
}

/// Rewrites the functions of the table above, inside out.
fn rewrite(sql: &str, binds: &mut [Bind]) -> String {
    let mut out = String::with_capacity(sql.len() + sql.len() / 4);
    let mut rest = sql;
    // Which `?` comes next, to find the bind of a MATCH.
    let mut parameter = 0;
    while !rest.is_empty() {
        let Some(at) = next_token(rest) else {
            out.push_str(rest);
            break;
        };
        let (before, from) = rest.split_at(at);
        parameter += before.matches('?').count();
        out.push_str(before);
        if let Some(after) = from.strip_prefix("MATCH ?") {
            if let Some(Bind::Text(phrase)) = binds.get_mut(parameter) {
                *phrase = like_pattern(phrase);
            }
            out.push_str("ILIKE ?");
            parameter += 1;
            rest = after;
            continue;
        }
        let name_end = from
            .find('(')
            .expect("a function token ends in a parenthesis");
        let name = &from[..name_end];
        let close = matching(from, name_end);
        let inner = &from[name_end + 1..close];
        let mut inner_binds_start = parameter;
        let args: Vec<String> = split_arguments(inner)
            .into_iter()
            .map(|arg| {
                let count = arg.matches('?').count();
                let slice_end = (inner_binds_start + count).min(binds.len());
                let rewritten = rewrite(arg, &mut binds[inner_binds_start..slice_end]);
                inner_binds_start += count;
                rewritten
            })
            .collect();
        parameter = inner_binds_start;
        out.push_str(&function(name, &args));
        rest = &from[close + 1..];
    }
    out
}

/// The PostgreSQL form of SQLite's function `name` over `args`.
fn function(name: &str, args: &[String]) -> String {
    match (name, args) {
        ("json_array", _) => format!("json_build_array({})", args.join(", ")),
        ("json_group_array", [x]) => format!("coalesce(jsonb_agg({x}), '[]'::jsonb)"),
        ("json", [x]) => format!("({x})::jsonb"),
        ("json_extract", [x, path]) => format!("(({x})::jsonb #>> '{}')", pg_path(path)),
        ("json_each", [x]) => format!("jsonb_array_elements_text(({x})::jsonb)"),
        ("hex", [x]) => format!("encode({x}, 'hex')"),
        ("max", [_, _, ..]) => format!("GREATEST({})", args.join(", ")),
        ("min", [_, _, ..]) => format!("LEAST({})", args.join(", ")),
        ("instr", [h, n]) => format!("strpos({h}, {n})"),
        _ => format!("{name}({})", args.join(", ")),
    }
}

/// The functions rewritten, as they start a call.
const FUNCTIONS: &[&str] = &[
    "json_group_array(",
    "json_array(",
    "json_extract(",
    "json_each(",
    "json(",
    "hex(",
    "max(",
    "min(",
    "instr(",
];

/// Where the next rewritten function call or `MATCH ?` starts in `sql`, outside quotes.
fn next_token(sql: &str) -> Option<usize> {
    let bytes = sql.as_bytes();
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\'' {
            quoted = !quoted;
            continue;
        }
        if quoted {
            continue;
        }
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !word_start {
            continue;
        }
        let rest = &sql[i..];
        if rest.starts_with("MATCH ?") || FUNCTIONS.iter().any(|f| rest.starts_with(f)) {
            return Some(i);
        }
    }
    None
}

/// The index of the parenthesis closing the one at `open`.
fn matching(sql: &str, open: usize) -> usize {
    let mut depth = 0;
    let mut quoted = false;
    for (i, c) in sql.char_indices().skip_while(|(i, _)| *i < open) {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced parentheses in the subgraph's SQL: {sql}")
}

/// The top-level arguments of a call's inside.
fn split_arguments(inner: &str) -> Vec<&str> {
    let mut args = Vec::new();
    let (mut depth, mut quoted, mut start) = (0, false, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                args.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.trim().is_empty() {
        args.push(inner[start..].trim());
    }
    args
}

/// A SQLite JSON path literal (`'$.a.b'`, `'$[0]'`) as a PostgreSQL path (`{a,b}`, `{0}`).
fn pg_path(literal: &str) -> String {
    let path = literal.trim_matches('\'').trim_start_matches('$');
    let parts: Vec<&str> = path
        .split(['.', '[', ']'])
        .filter(|part| !part.is_empty())
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// An FTS5 phrase (`"text"`, inner quotes doubled) as the LIKE pattern of a substring.
fn like_pattern(phrase: &str) -> String {
    let text = phrase
        .strip_prefix('"')
        .and_then(|p| p.strip_suffix('"'))
        .unwrap_or(phrase)
        .replace("\"\"", "\"");
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// The statement with its one column cast to text.
fn as_text(sql: &str) -> String {
    if let Some(rest) = sql.strip_prefix("SELECT row FROM ") {
        return format!("SELECT CAST(row AS TEXT) FROM {rest}");
    }
    if sql.starts_with("SELECT json_build_array(") {
        let close = matching(sql, "SELECT json_build_array".len());
        return format!("{}::text{}", &sql[..=close], &sql[close + 1..]);
    }
    sql.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_functions_become_postgres_ones_inside_out() {
        let sql = Sql {
            text: "SELECT json_array(NULL, json_array(a.k), json(coalesce(json_extract(d.p, '$.a.b'), '[]')), \
                   max(a.t, coalesce((SELECT max(f.t) FROM f), 0)), lower(hex(e.h))) FROM a INDEXED BY i \
                   WHERE instr(a.n, ?) > 0 AND a.k IN (SELECT value FROM json_each(?)) \
                   AND a.k IN (SELECT x.k FROM x WHERE x.name MATCH ?)"
                .into(),
            binds: vec![
                Bind::Text("n".into()),
                Bind::Text("[1]".into()),
                Bind::Text("\"50%_x\"".into()),
            ],
        };
        let pg = render(sql);
        assert_eq!(
            pg.text,
            "SELECT json_build_array(NULL, json_build_array(a.k), (coalesce(((d.p)::jsonb #>> '{a,b}'), '[]'))::jsonb, \
             GREATEST(a.t, coalesce((SELECT max(f.t) FROM f), 0)), lower(encode(e.h, 'hex')))::text FROM a \
             WHERE strpos(a.n, $1) > 0 AND a.k IN (SELECT value FROM jsonb_array_elements_text(($2)::jsonb)) \
             AND a.k IN (SELECT x.k FROM x WHERE x.name ILIKE $3)"
        );
        assert_eq!(pg.binds[2], Bind::Text("%50\\%\\_x%".into()));
        assert_eq!(pg.binds[0], Bind::Text("n".into()));
    }

    #[test]
    fn group_arrays_and_paths() {
        assert_eq!(
            rewrite("(SELECT json_group_array(t) FROM x)", &mut []),
            "(SELECT coalesce(jsonb_agg(t), '[]'::jsonb) FROM x)"
        );
        assert_eq!(pg_path("'$[1]'"), "{1}");
        assert_eq!(
            rewrite("max(a, max(b), c, min(d, e))", &mut []),
            "GREATEST(a, max(b), c, LEAST(d, e))"
        );
        assert_eq!(
            as_text("SELECT row FROM (SELECT 1 AS row) AS r"),
            "SELECT CAST(row AS TEXT) FROM (SELECT 1 AS row) AS r"
        );
    }
}
