//! A GraphQL request read into what to fetch: the operation chosen, its variables substituted,
//! fragments inlined, and every field checked against the catalogue. What graph-node refuses is
//! refused here in its words: an unknown field is ``Type `Agent` has no field `x` ``, which is
//! what the agent0 SDKs look for before retrying with an older field name. The document is
//! measured against the query budget (`crate::budget`) before anything expands it, and the
//! expansion itself counts the fields it produces and stops at that budget.

use super::catalogue::{self, Entity, Field, Shape};
use super::filter;
use super::sql::Sql;
use crate::budget::{BudgetError, QueryBudget};
use async_graphql::parser::types::{
    DocumentOperations, ExecutableDocument, Field as QueryField, OperationType, Selection,
    SelectionSet,
};
use async_graphql::parser::{Pos, Positioned};
use async_graphql::{Name, Value as ConstValue, Variables};
use std::cell::Cell;

/// Largest `first` graph-node accepts.
pub(crate) const MAX_FIRST: i64 = 1000;
/// Largest `skip` graph-node accepts.
pub(crate) const MAX_SKIP: i64 = 5000;
/// Deepest selection accepted.
const MAX_DEPTH: usize = 10;
/// Most fields a query's root may ask (aliases included), as `/graphql` bounds its aliases.
pub(crate) const MAX_ROOT_FIELDS: usize = 30;

/// Why a request was refused, with where in the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryError {
    pub(crate) message: String,
    pub(crate) at: Option<Pos>,
}

impl From<BudgetError> for QueryError {
    fn from(error: BudgetError) -> Self {
        Self::new(error.subgraph_message(), error.position())
    }
}

impl QueryError {
    fn new(message: impl Into<String>, at: Option<Pos>) -> Self {
        Self {
            message: message.into(),
            at,
        }
    }
}

/// One field of the response, under the key it is answered with.
#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) key: String,
    pub(crate) what: What,
}

/// What a response field holds.
#[derive(Debug)]
pub(crate) enum What {
    /// `__typename`.
    Typename(&'static str),
    /// A scalar or list field read by its SQL.
    Column(&'static Field),
    /// A referenced entity.
    Ref(&'static Field, Vec<Item>),
    /// A derived list.
    Derived(&'static Field, Box<ListQuery>),
}

/// A list of entities: which, in what order, which page, and what of each.
#[derive(Debug)]
pub(crate) struct ListQuery {
    pub(crate) entity: &'static Entity,
    pub(crate) filter: Sql,
    pub(crate) order: &'static Field,
    pub(crate) descending: bool,
    pub(crate) first: i64,
    pub(crate) skip: i64,
    pub(crate) items: Vec<Item>,
}

/// A field of the query root.
#[derive(Debug)]
pub(crate) enum Root {
    /// `agents(…)` and the like.
    List(ListQuery),
    /// `agent(id: …)` and the like.
    Single {
        entity: &'static Entity,
        id: String,
        items: Vec<Item>,
    },
    /// `_meta { … }`.
    Meta(Vec<MetaItem>),
    /// `__typename`.
    Typename,
}

/// A field of `_meta`, or of its `block`.
#[derive(Debug)]
pub(crate) struct MetaItem {
    pub(crate) key: String,
    pub(crate) name: String,
    pub(crate) items: Vec<MetaItem>,
}

/// What a request asks: each root field under its response key.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) roots: Vec<(String, Root)>,
    /// The block a `block: { number }` argument asked for, checked against the index later.
    pub(crate) block: Option<i64>,
}

/// Reads `text` (with `variables`, choosing `operation`) into a plan, refusing what is over
/// `budget` before expanding anything.
pub(crate) fn plan(
    text: &str,
    operation: Option<&str>,
    variables: &Variables,
    budget: &QueryBudget,
) -> Result<Plan, QueryError> {
    budget.check_text(text)?;
    budget.check_variables(variables)?;
    let document = async_graphql::parser::parse_query(text)
        .map_err(|e| QueryError::new(format!("Syntax error: {e}"), e.positions().next()))?;
    budget.check_document(&document)?;
    let operation_def = choose(&document, operation)?;
    if operation_def.node.ty != OperationType::Query {
        return Err(QueryError::new(
            "Only queries are supported",
            Some(operation_def.pos),
        ));
    }
    // Variables the request leaves out take their declared defaults.
    let mut values = variables.clone();
    for definition in &operation_def.node.variable_definitions {
        let name = definition.node.name.node.clone();
        if !values.contains_key(&name)
            && let Some(default) = &definition.node.default_value
        {
            values.insert(name, default.node.clone());
        }
    }
    let mut reader = Reader {
        document: &document,
        variables: &values,
        block: None,
        expanded: Cell::new(0),
        max_expanded: budget.limits().max_expanded_selections,
    };
    let fields = reader.flatten(&operation_def.node.selection_set, 0)?;
    if fields.len() > MAX_ROOT_FIELDS {
        return Err(QueryError::new(
            format!(
                "The query asks for {} root fields; at most {MAX_ROOT_FIELDS} are answered",
                fields.len()
            ),
            Some(operation_def.pos),
        ));
    }
    let mut roots = Vec::new();
    for field in fields {
        let key = response_key(&field.node);
        let name = field.node.name.node.as_str();
        let root = match name {
            "__typename" => Root::Typename,
            "_meta" => Root::Meta(reader.meta(&field.node.selection_set, 0)?),
            _ => {
                let Some((entity, many)) = catalogue::query_field(name) else {
                    return Err(QueryError::new(
                        format!("Type `Query` has no field `{name}`"),
                        Some(field.pos),
                    ));
                };
                if many {
                    Root::List(reader.list(entity, field, "Query")?)
                } else {
                    reader.single(entity, field)?
                }
            }
        };
        roots.push((key, root));
    }
    Ok(Plan {
        roots,
        block: reader.block,
    })
}

fn choose<'d>(
    document: &'d ExecutableDocument,
    operation: Option<&str>,
) -> Result<&'d Positioned<async_graphql::parser::types::OperationDefinition>, QueryError> {
    match (&document.operations, operation) {
        (DocumentOperations::Single(op), _) => Ok(op),
        (DocumentOperations::Multiple(ops), Some(name)) => ops
            .get(&Name::new(name))
            .ok_or_else(|| QueryError::new(format!("Unknown operation named `{name}`"), None)),
        (DocumentOperations::Multiple(ops), None) if ops.len() == 1 => {
            Ok(ops.values().next().expect("one"))
        }
        (DocumentOperations::Multiple(_), None) => Err(QueryError::new(
            "The document holds several operations; name the one to run in `operationName`",
            None,
        )),
    }
}

fn response_key(field: &QueryField) -> String {
    field.alias.as_ref().unwrap_or(&field.name).node.to_string()
}

struct Reader<'a> {
    document: &'a ExecutableDocument,
    variables: &'a Variables,
    block: Option<i64>,
    /// Fields [`Reader::flatten`] produced so far, over the whole plan.
    expanded: Cell<usize>,
    /// The most it may produce (`max_expanded_selections`): the budget checked the document
    /// already, this keeps the expansion itself from ever outgrowing it.
    max_expanded: usize,
}

impl<'a> Reader<'a> {
    /// The fields of `set`, fragments inlined, in document order: borrowed from the document,
    /// never copied, and counted against the budget as they are produced.
    fn flatten(
        &self,
        set: &'a Positioned<SelectionSet>,
        depth: usize,
    ) -> Result<Vec<&'a Positioned<QueryField>>, QueryError> {
        let mut out = Vec::new();
        self.flatten_into(set, depth, &mut out)?;
        Ok(out)
    }

    fn flatten_into(
        &self,
        set: &'a Positioned<SelectionSet>,
        depth: usize,
        out: &mut Vec<&'a Positioned<QueryField>>,
    ) -> Result<(), QueryError> {
        if depth > MAX_DEPTH {
            return Err(QueryError::new(
                format!("query has a depth that exceeds the limit of `{MAX_DEPTH}`"),
                Some(set.pos),
            ));
        }
        for selection in &set.node.items {
            match &selection.node {
                Selection::Field(field) => {
                    let produced = self.expanded.get() + 1;
                    if produced > self.max_expanded {
                        return Err(BudgetError::TooManySelections {
                            limit: self.max_expanded,
                        }
                        .into());
                    }
                    self.expanded.set(produced);
                    out.push(field);
                }
                Selection::InlineFragment(fragment) => {
                    self.flatten_into(&fragment.node.selection_set, depth + 1, out)?;
                }
                Selection::FragmentSpread(spread) => {
                    let name = &spread.node.fragment_name.node;
                    let fragment = self.document.fragments.get(name).ok_or_else(|| {
                        QueryError::new(format!("Unknown fragment `{name}`"), Some(spread.pos))
                    })?;
                    self.flatten_into(&fragment.node.selection_set, depth + 1, out)?;
                }
            }
        }
        Ok(())
    }

    /// The argument `name` of `field`, variables substituted; `None` when absent.
    fn argument(
        &self,
        field: &Positioned<QueryField>,
        name: &str,
    ) -> Result<Option<ConstValue>, QueryError> {
        let Some((_, value)) = field.node.arguments.iter().find(|(n, _)| n.node == name) else {
            return Ok(None);
        };
        let resolved = value.node.clone().into_const_with(|variable| {
            Ok::<_, QueryError>(
                self.variables
                    .get(&variable)
                    .cloned()
                    .unwrap_or(ConstValue::Null),
            )
        })?;
        Ok((!matches!(resolved, ConstValue::Null)).then_some(resolved))
    }

    /// Refuses any argument of `field` not in `allowed`.
    fn only_arguments(
        &self,
        field: &Positioned<QueryField>,
        owner: &str,
        allowed: &[&str],
    ) -> Result<(), QueryError> {
        for (name, _) in &field.node.arguments {
            if !allowed.contains(&name.node.as_str()) {
                return Err(QueryError::new(
                    format!(
                        "Unknown argument `{}` on field `{owner}.{}`",
                        name.node, field.node.name.node
                    ),
                    Some(name.pos),
                ));
            }
        }
        Ok(())
    }

    /// Notes a `block: { number }` argument.
    fn block(&mut self, field: &Positioned<QueryField>) -> Result<(), QueryError> {
        let Some(block) = self.argument(field, "block")? else {
            return Ok(());
        };
        let ConstValue::Object(fields) = &block else {
            return Err(QueryError::new(
                "`block` takes an object such as `{ number: 123 }`",
                Some(field.pos),
            ));
        };
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("number", ConstValue::Number(n)) => {
                    let number = n.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                        QueryError::new(format!("Invalid block number `{n}`"), Some(field.pos))
                    })?;
                    self.block = Some(self.block.map_or(number, |b| b.max(number)));
                }
                ("number_gte", ConstValue::Number(_)) => {}
                _ => {
                    return Err(QueryError::new(
                        format!("agentindex answers `block` by number only, not by `{key}`"),
                        Some(field.pos),
                    ));
                }
            }
        }
        Ok(())
    }

    fn single(
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
    fn list(
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
        self.only_arguments(field, owner, &allowed)?;
        let first = self.count(field, "first", 100, MAX_FIRST)?;
        let skip = self.count(field, "skip", 0, MAX_SKIP)?;
        let order = match self.argument(field, "orderBy")? {
            None => entity.id(),
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
            None => false,
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
        let filter = match self.argument(field, "where")? {
            None => Sql::new("true"),
            Some(value) => filter::condition(entity, &value)
                .map_err(|m| QueryError::new(m, Some(field.pos)))?,
        };
        let items = self.items(entity, &field.node.selection_set, field, 1)?;
        Ok(ListQuery {
            entity,
            filter,
            order,
            descending,
            first,
            skip,
            items,
        })
    }

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

    fn count(
        &self,
        field: &Positioned<QueryField>,
        name: &str,
        default: i64,
        max: i64,
    ) -> Result<i64, QueryError> {
        match self.argument(field, name)? {
            None => Ok(default),
            Some(ConstValue::Number(n)) => match n.as_i64() {
                Some(value) if (0..=max).contains(&value) => Ok(value),
                _ => Err(QueryError::new(
                    format!("The `{name}` argument must be between 0 and {max}, but is {n}"),
                    Some(field.pos),
                )),
            },
            Some(other) => Err(QueryError::new(
                format!("Invalid value `{other}` for argument `{name}`: an Int is expected"),
                Some(field.pos),
            )),
        }
    }

    fn items(
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
                    let target = catalogue::entity(target).expect("refs name entities");
                    What::Ref(
                        def,
                        self.items(target, &field.node.selection_set, field, depth + 1)?,
                    )
                }
                Shape::Derived { entity: target, .. } => {
                    let target = catalogue::entity(target).expect("derived lists name entities");
                    What::Derived(def, Box::new(self.list(target, field, entity.name)?))
                }
            };
            items.push(Item { key, what });
        }
        Ok(items)
    }

    fn meta(
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

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
