//! Environment overrides: `AGENTINDEX_DATABASE__URL=…` sets `database.url`.
//!
//! The variable name after the prefix is the key path in upper case with `__` between levels;
//! a numeric level indexes an array (`AGENTINDEX_CHAINS__0__RPC`). The value is read as a TOML
//! value when it parses as one (`true`, `30`, `["a", "b"]`) and as a string otherwise.

use super::{ConfigError, ConfigResult};
use toml::{Table, Value};

const PREFIX: &str = "AGENTINDEX_";

pub(super) fn apply_overrides(
    tree: &mut Table,
    vars: impl IntoIterator<Item = (String, String)>,
) -> ConfigResult<()> {
    let mut overrides: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(name, _)| name.starts_with(PREFIX) && name.contains("__"))
        .collect();
    // Deterministic order whatever the environment's.
    overrides.sort();
    for (name, raw) in overrides {
        let path: Vec<String> = name[PREFIX.len()..]
            .split("__")
            .map(|segment| segment.to_ascii_lowercase())
            .collect();
        if path.iter().any(String::is_empty) {
            return Err(ConfigError::Env {
                var: name,
                reason: "empty key segment".into(),
            });
        }
        set(tree, &path, parse_value(&raw)).map_err(|error| ConfigError::Env {
            var: name.clone(),
            reason: error.to_string(),
        })?;
    }
    Ok(())
}

/// Tool and test variables such as `AGENTINDEX_ANVIL` have no `__` and are not config keys.
fn parse_value(raw: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()))
}

/// Why an override's key path cannot be set in the tree.
#[derive(Debug, thiserror::Error)]
enum PathError {
    /// A segment under an array is not an index.
    #[error("`{array}` is an array; expected an index, found {segment:?}")]
    NotAnIndex { array: String, segment: String },
    /// An index past the end of an array (only appending one more entry is allowed).
    #[error("`{array}` has {len} entries; index {index} skips some")]
    SkipsEntries {
        array: String,
        len: usize,
        index: usize,
    },
    /// A key under something that is neither a table nor an array.
    #[error("`{at}` is a plain value and has no key {key:?}")]
    PlainValue { at: String, key: String },
}

fn set(table: &mut Table, path: &[String], value: Value) -> Result<(), PathError> {
    let (first, rest) = path.split_first().expect("paths are non-empty");
    if rest.is_empty() {
        table.insert(first.clone(), value);
        return Ok(());
    }
    let child = table
        .entry(first.clone())
        .or_insert_with(|| new_container(&rest[0]));
    set_in_value(child, rest, value, first)
}

fn set_in_value(
    node: &mut Value,
    path: &[String],
    value: Value,
    at: &str,
) -> Result<(), PathError> {
    match node {
        Value::Table(table) => set(table, path, value),
        Value::Array(items) => {
            let index: usize = path[0].parse().map_err(|_| PathError::NotAnIndex {
                array: at.to_string(),
                segment: path[0].clone(),
            })?;
            if index > items.len() {
                return Err(PathError::SkipsEntries {
                    array: at.to_string(),
                    len: items.len(),
                    index,
                });
            }
            if index == items.len() {
                items.push(new_container(path.get(1).map_or("", String::as_str)));
            }
            if path.len() == 1 {
                items[index] = value;
                Ok(())
            } else {
                set_in_value(&mut items[index], &path[1..], value, &path[0])
            }
        }
        _ => Err(PathError::PlainValue {
            at: at.to_string(),
            key: path[0].clone(),
        }),
    }
}

fn new_container(next_segment: &str) -> Value {
    if next_segment.parse::<usize>().is_ok() {
        Value::Array(Vec::new())
    } else {
        Value::Table(Table::new())
    }
}
