//! A Masumi entry's metadata `tags` find its agent as a card's skill tags do: by the tags and
//! skill filters, by full-text search, and in the tag facets. Asked of the agents
//! `masumi_registry` registers (no Cardano node runs here: see that module).

use crate::support;
use serde_json::json;

/// Checks, on the API at `base`, that the cardless `summariser` (metadata tags "summaries" and
/// "text") is found by its own tags alone and `card_agent` (tag "cards" on its card's skill and
/// in its metadata) by its tag, counted once.
pub(crate) async fn find_agents(base: &str, summariser: &str, card_agent: &str) {
    let found = |query: &'static str| {
        let base = base.to_string();
        async move {
            let answer =
                support::api::post_json(&format!("{base}/graphql"), &json!({ "query": query }))
                    .await;
            assert!(answer.get("errors").is_none(), "{answer}");
            let ids: Vec<String> = answer["data"]["agents"]["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["node"]["id"].as_str().unwrap().to_string())
                .collect();
            ids
        }
    };
    let by_tag =
        found("{ agents(filter: {tags: [\"Summaries\", \"text\"]}) { edges { node { id } } } }")
            .await;
    assert_eq!(by_tag, [summariser]);
    let by_skill =
        found("{ agents(filter: {skill: \"summaries\"}) { edges { node { id } } } }").await;
    assert_eq!(by_skill, by_tag);
    let searched = found("{ agents(search: \"summaries\") { edges { node { id } } } }").await;
    assert_eq!(searched, by_tag, "the tags are searched as words too");
    let cards = found("{ agents(filter: {tags: [\"cards\"]}) { edges { node { id } } } }").await;
    assert_eq!(cards, [card_agent]);
    let facets = support::api::post_json(
        &format!("{base}/graphql"),
        &json!({"query": "{ tagFacets { value count } }"}),
    )
    .await;
    let facets = &facets["data"]["tagFacets"];
    for tag in ["summaries", "text"] {
        assert!(
            facets
                .as_array()
                .unwrap()
                .contains(&json!({"value": tag, "count": 1})),
            "{tag} in {facets}"
        );
    }
    assert!(
        facets
            .as_array()
            .unwrap()
            .contains(&json!({"value": "cards", "count": 1})),
        "an agent with a tag twice counts once: {facets}"
    );
}
