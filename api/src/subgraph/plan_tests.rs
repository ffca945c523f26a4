//! Unit tests of `plan.rs`: graph-node's wording for unknown fields and arguments, its bounds on
//! pages and roots, variables, defaults, fragments and the plural names a list answers under.

use super::*;
use async_graphql::Value as ConstValue;

fn error(text: &str) -> String {
    plan(
        Dialect::Sqlite,
        text,
        None,
        &Variables::default(),
        &QueryBudget::default(),
    )
    .unwrap_err()
    .message
}

#[test]
fn unknown_fields_are_named_as_graph_node_names_them() {
    assert_eq!(
        error("{ agents { id registrationFile { agentWallet } } }"),
        "Type `AgentRegistrationFile` has no field `agentWallet`"
    );
    assert_eq!(
        error("{ feedbacks { responses { responseURI } } }"),
        "Type `FeedbackResponse` has no field `responseURI`"
    );
    assert_eq!(
        error("{ widgets { id } }"),
        "Type `Query` has no field `widgets`"
    );
}

#[test]
fn unknown_arguments_are_named_with_their_field() {
    assert_eq!(
        error("{ agents(colour: 1) { id } }"),
        "Unknown argument `colour` on field `Query.agents`"
    );
    assert_eq!(
        error("{ agents { feedback(colour: 1) { id } } }"),
        "Unknown argument `colour` on field `Agent.feedback`"
    );
}

#[test]
fn pages_are_bounded_as_graph_node_bounds_them() {
    assert_eq!(
        error("{ agents(first: 5000) { id } }"),
        "The `first` argument must be between 0 and 1000, but is 5000"
    );
    assert_eq!(
        error("{ agents(skip: 6000) { id } }"),
        "The `skip` argument must be between 0 and 5000, but is 6000"
    );
}

#[test]
fn metadata_lists_answer_under_both_plurals() {
    for field in ["agentMetadatas", "agentMetadata_collection"] {
        let plan = plan(
            Dialect::Sqlite,
            &format!("{{ {field} {{ id key }} }}"),
            None,
            &Variables::default(),
            &QueryBudget::default(),
        )
        .unwrap();
        let (key, Root::List(list)) = &plan.roots[0] else {
            panic!("a list")
        };
        assert_eq!((key.as_str(), list.entity.name), (field, "AgentMetadata"));
    }
}

#[test]
fn a_root_of_many_fields_is_refused() {
    // Unaliased, so the budget's alias limit (its own test) leaves it to the root-field cap.
    let many = "agents(first: 1000) { id } ".repeat(31);
    assert_eq!(
        error(&format!("{{ {many} }}")),
        "The query asks for 31 root fields; at most 30 are answered"
    );
}

#[test]
fn variables_and_fragments_are_read() {
    let mut variables = Variables::default();
    variables.insert(Name::new("first"), ConstValue::Number(7.into()));
    variables.insert(Name::new("orderBy"), ConstValue::String("createdAt".into()));
    let plan = plan(
        Dialect::Sqlite,
        "query Q($first: Int!, $orderBy: Agent_orderBy!, $skip: Int = 3) {
           page: agents(first: $first, skip: $skip, orderBy: $orderBy, orderDirection: desc) { ...Parts }
         }
         fragment Parts on Agent { id owner }",
        Some("Q"),
        &variables,
        &QueryBudget::default(),
    )
    .unwrap();
    let (key, Root::List(list)) = &plan.roots[0] else {
        panic!("a list")
    };
    assert_eq!(key, "page");
    assert_eq!(
        (list.first, list.skip, list.order.name, list.descending),
        (7, 3, "createdAt", true)
    );
    assert_eq!(list.items.len(), 2);
}

#[test]
fn documents_over_the_query_budget_are_refused_in_graph_nodes_style() {
    let mut fan_out = String::from("{ agents { ...F0 } }");
    for level in 0..25 {
        let next = level + 1;
        fan_out += &format!(" fragment F{level} on Agent {{ ...F{next} ...F{next} }}");
    }
    fan_out += " fragment F25 on Agent { id }";
    assert_eq!(
        error(&fan_out),
        "query asks for `256` fields in one selection set and thereby exceeds the limit of `200`"
    );
    assert_eq!(
        error("{ agents { ...A } } fragment A on Agent { id ...A }"),
        "query has fragment cycle including `A`"
    );
    let deep = format!(
        "{{ agents(where: {{id_in: {}1{}}}) {{ id }} }}",
        "[".repeat(3_000),
        "]".repeat(3_000)
    );
    assert_eq!(
        error(&deep),
        "query has a depth that exceeds the limit of `32`"
    );
}
