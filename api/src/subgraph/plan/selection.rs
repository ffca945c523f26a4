//! The fields a request selects, checked against the catalogue: a single entity by id, a list
//! with its filter, order and page, the fields of each entity (references and derived lists
//! read in turn), and `_meta`. A name the catalogue lacks is refused as graph-node refuses it.

use super::error::QueryError;
use super::reader::{Reader, response_key};
use super::types::{Item, ListQuery, MetaItem, Root, What};
use crate::subgraph::catalogue::{CURRENT, Entity, Field, INTERVAL, Shape};
use crate::subgraph::filter;
use crate::subgraph::sql::Sql;
use async_graphql::Value as ConstValue;
use async_graphql::parser::Positioned;
use async_graphql::parser::types::{Field as QueryField, SelectionSet};

/// Largest `first` graph-node accepts.
const MAX_FIRST: i64 = 1000;
/// Largest `skip` graph-node accepts.
const MAX_SKIP: i64 = 5000;

impl<'a> Reader<'a> {
    /// A root field answering one entity by `id` (`agent(id: …)`).
    pub(super) fn single(
        &mut self,
        entity: &'static Entity,
        field: &'a Positioned<QueryField>,
    ) -> Result<Root, QueryError> {
        self.only_arguments(field, "Query", &["id", "block", "subgraphError"])?;
        self.block(field)?;
        let id = match self.argument(field, "id")? {
            Some(ConstValue::String(id)) => id,
            Some(ConstValue::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(QueryError::new(
                    format!("Invalid value `{other}` for argument `id`"),
                    Some(field.pos),
                ));
            }
            None => {
                return Err(QueryError::new(
                    format!(
                        "No value provided for required argument: `id` of `Query.{}`",
                        field.node.name.node
                    ),
                    Some(field.pos),
                ));
            }
        };
        let items = self.items(entity, &field.node.selection_set, field, 1)?;
        Ok(Root::Single { entity, id, items })
    }

    /// A list field of `owner` (`Query` at the root, else the entity holding it).
    pub(super) fn list(
        &mut self,
        entity: &'static Entity,
        field: &'a Positioned<QueryField>,
        owner: &str,
    ) -> Result<ListQuery, QueryError> {
        let root = owner == "Query";
        let mut allowed = vec!["where", "first", "skip", "orderBy", "orderDirection"];
        if root {
            allowed.extend(["block", "subgraphError"]);
            self.block(field)?;
        }
        if entity.is_aggregation() {
            allowed.extend(["interval", "current"]);
        }
        self.only_arguments(field, owner, &allowed)?;
        let placeholders = if entity.is_aggregation() {
            self.aggregation(field)?
        } else {
            Vec::new()
        };
        let first = self.count(field, "first", 100, MAX_FIRST)?;
        let skip = self.count(field, "skip", 0, MAX_SKIP)?;
        // Aggregations answer newest bucket first unless asked otherwise, as graph-node does.
        let by_time = entity
            .is_aggregation()
            .then(|| entity.field("timestamp"))
            .flatten();
        let order = match self.argument(field, "orderBy")? {
            None => by_time.unwrap_or_else(|| entity.id()),
            Some(ConstValue::Enum(name)) => self.order_field(entity, name.as_str(), field)?,
            Some(ConstValue::String(name)) => self.order_field(entity, &name, field)?,
            Some(other) => {
                return Err(QueryError::new(
                    format!("Invalid value `{other}` for `{}_orderBy`", entity.name),
                    Some(field.pos),
                ));
            }
        };
        let descending = match self.argument(field, "orderDirection")? {
            None => by_time.is_some(),
            Some(ConstValue::Enum(d)) if d == "asc" => false,
            Some(ConstValue::Enum(d)) if d == "desc" => true,
            Some(ConstValue::String(d)) if d == "asc" => false,
            Some(ConstValue::String(d)) if d == "desc" => true,
            Some(other) => {
                return Err(QueryError::new(
                    format!("Enum value `{other}` is not a value of `OrderDirection`"),
                    Some(field.pos),
                ));
            }
        };
        let (filter, narrowed) = match self.argument(field, "where")? {
            None => (Sql::new("true"), false),
            Some(value) => (
                filter::condition(self.catalogue, entity, &value)
                    .map_err(|refusal| QueryError::new(refusal.to_string(), Some(field.pos)))?,
                filter::narrows(self.catalogue, entity, &value),
            ),
        };
        let items = self.items(entity, &field.node.selection_set, field, 1)?;
        Ok(ListQuery {
            entity,
            filter,
            narrowed,
            order,
            descending,
            first,
            skip,
            items,
            placeholders,
        })
    }

    /// An aggregation's `interval` (`hour` or `day`, required) and `current` (`exclude`, the
    /// default, leaves out the bucket still open; `include` counts it), as its SQL reads them.
    fn aggregation(
        &self,
        field: &Positioned<QueryField>,
    ) -> Result<Vec<(&'static str, String)>, QueryError> {
        let word = |value: Option<ConstValue>| match value {
            Some(ConstValue::Enum(name)) => Some(name.to_string()),
            Some(ConstValue::String(text)) => Some(text),
            _ => None,
        };
        let interval = match word(self.argument(field, "interval")?).as_deref() {
            Some("hour") => 3_600,
            Some("day") => 86_400,
            Some(other) => {
                return Err(QueryError::new(
                    format!("Enum value `{other}` is not a value of `Aggregation_interval`"),
                    Some(field.pos),
                ));
            }
            None => {
                return Err(QueryError::new(
                    format!(
                        "No value provided for required argument: `interval` of `Query.{}`",
                        field.node.name.node
                    ),
                    Some(field.pos),
                ));
            }
        };
        let current = match word(self.argument(field, "current")?).as_deref() {
            None | Some("exclude") => 0,
            Some("include") => 1,
            Some(other) => {
                return Err(QueryError::new(
                    format!("Enum value `{other}` is not a value of `Aggregation_current`"),
                    Some(field.pos),
                ));
            }
        };
        Ok(vec![
            (INTERVAL, interval.to_string()),
            (CURRENT, current.to_string()),
        ])
    }

    /// The field `orderBy` names: a scalar or a reference of `entity`.
    fn order_field(
        &self,
        entity: &'static Entity,
        name: &str,
        field: &Positioned<QueryField>,
    ) -> Result<&'static Field, QueryError> {
        entity
            .field(name)
            .filter(|f| matches!(f.shape, Shape::Scalar(_)) || matches!(f.shape, Shape::Ref { .. }))
            .ok_or_else(|| {
                QueryError::new(
                    format!(
                        "Enum value `{name}` is not a value of `{}_orderBy`",
                        entity.name
                    ),
                    Some(field.pos),
                )
            })
    }

    /// The fields selected of `entity` under `owner`, each checked against the catalogue.
    pub(super) fn items(
        &mut self,
        entity: &'static Entity,
        set: &'a Positioned<SelectionSet>,
        owner: &'a Positioned<QueryField>,
        depth: usize,
    ) -> Result<Vec<Item>, QueryError> {
        if set.node.items.is_empty() {
            return Err(QueryError::new(
                format!(
                    "Field `{}` of type `{}` must have a selection of subfields",
                    owner.node.name.node, entity.name
                ),
                Some(owner.pos),
            ));
        }
        let mut items = Vec::new();
        for field in self.flatten(set, depth)? {
            let key = response_key(&field.node);
            let name = field.node.name.node.as_str();
            if name == "__typename" {
                items.push(Item {
                    key,
                    what: What::Typename(entity.name),
                });
                continue;
            }
            let Some(def) = entity.field(name) else {
                return Err(QueryError::new(
                    format!("Type `{}` has no field `{name}`", entity.name),
                    Some(field.pos),
                ));
            };
            let what = match def.shape {
                Shape::Scalar(_) | Shape::List(_) => {
                    self.only_arguments(field, entity.name, &[])?;
                    if !field.node.selection_set.node.items.is_empty() {
                        return Err(QueryError::new(
                            format!(
                                "Field `{name}` of type `{}` has no subfields",
                                def.type_text()
                            ),
                            Some(field.pos),
                        ));
                    }
                    What::Column(def)
                }
                Shape::Ref { entity: target, .. } => {
                    self.only_arguments(field, entity.name, &[])?;
                    let target = self.catalogue.entity(target).expect("refs name entities");
                    What::Ref(
                        def,
                        self.items(target, &field.node.selection_set, field, depth + 1)?,
                    )
                }
                Shape::Derived { entity: target, .. } => {
                    let target = self
                        .catalogue
                        .entity(target)
                        .expect("derived lists name entities");
                    What::Derived(def, Box::new(self.list(target, field, entity.name)?))
                }
            };
            items.push(Item { key, what });
        }
        Ok(items)
    }

    /// The fields of `_meta` (`depth` 0) or of its `block` (`depth` 1).
    pub(super) fn meta(
        &self,
        set: &'a Positioned<SelectionSet>,
        depth: usize,
    ) -> Result<Vec<MetaItem>, QueryError> {
        let known: &[&str] = if depth == 0 {
            &["block", "deployment", "hasIndexingErrors", "__typename"]
        } else {
            &["number", "hash", "timestamp", "parentHash", "__typename"]
        };
        let owner = if depth == 0 { "_Meta_" } else { "_Block_" };
        let mut out = Vec::new();
        for field in self.flatten(set, depth)? {
            let name = field.node.name.node.to_string();
            if !known.contains(&name.as_str()) {
                return Err(QueryError::new(
                    format!("Type `{owner}` has no field `{name}`"),
                    Some(field.pos),
                ));
            }
            let items = if name == "block" {
                self.meta(&field.node.selection_set, depth + 1)?
            } else {
                Vec::new()
            };
            out.push(MetaItem {
                key: response_key(&field.node),
                name,
                items,
            });
        }
        Ok(out)
    }
}
