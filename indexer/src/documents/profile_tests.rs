//! The profile rules, one property each, on documents read the way the indexer reads them.

use super::*;
use crate::documents::{parse_card, parse_registration};

const REGISTRY: &str = "0x8004a169fb4a3325136eb29fa0ceb6d2e539a432";

fn card(name: &str, skill: &str) -> Projection {
    let json = serde_json::json!({
        "name": name,
        "description": format!("{name} does things"),
        "url": "https://agent.example/a2a",
        "version": "1.0.0",
        "protocolVersion": "0.3.0",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json"],
        "skills": [{"id": skill, "name": skill, "description": "a skill", "tags": ["Alpha"]}]
    });
    let projection = parse_card(json.to_string().as_bytes(), &mut Report::default())
        .expect("a card the reader accepts");
    Projection::Card(Box::new(projection))
}

fn registration(name: &str, token: &str, x402: bool) -> Projection {
    let json = serde_json::json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": name,
        "description": format!("{name}, registered"),
        "services": [{"name": "A2A", "endpoint": "https://agent.example/.well-known/agent-card.json"}],
        "x402Support": x402,
        "registrations": [{"agentRegistry": format!("eip155:8453:{REGISTRY}"), "agentId": token}]
    });
    let projection = parse_registration(json.to_string().as_bytes(), &mut Report::default())
        .expect("a registration file the reader accepts");
    Projection::Registration(projection)
}

fn linked(role: LinkRole, uri: &str, projection: Option<Projection>) -> LinkedDocument {
    LinkedDocument {
        role,
        uri: uri.to_string(),
        status: projection.as_ref().map(|_| "ok".to_string()),
        projection,
        hash: None,
        signature: None,
        source: Some(format!("https://{uri}")),
    }
}

fn erc8004_agent(token: &str) -> ChainAgent {
    ChainAgent {
        chain_id: 8453,
        erc8004: Some((REGISTRY.to_string(), token.to_string())),
        ..ChainAgent::default()
    }
}

#[test]
fn name_comes_from_the_registration_file_then_the_card_then_the_chain() {
    let mut agent = erc8004_agent("7");
    agent.name = Some("chain name".into());
    let reg = linked(
        LinkRole::Registration,
        "reg",
        Some(registration("file name", "7", false)),
    );
    let card = linked(LinkRole::Card, "card", Some(card("card name", "s")));
    let both = build_profile(&agent, &[reg.clone(), card.clone()]);
    assert_eq!(both.name.as_deref(), Some("file name"));
    let card_only = build_profile(&agent, std::slice::from_ref(&card));
    assert_eq!(card_only.name.as_deref(), Some("card name"));
    assert_eq!(card_only.skills.len(), 1);
    assert_eq!(card_only.card_uri.as_deref(), Some("card"));
    assert_eq!(card_only.card_status, "ok");
    assert_eq!(card_only.protocol_version.as_deref(), Some("0.3.0"));
    assert_eq!(card_only.input_modes, ["text/plain"]);
    let none = build_profile(&agent, &[]);
    assert_eq!(none.name.as_deref(), Some("chain name"));
    assert_eq!(none.card_status, "none");
}

#[test]
fn a_card_that_is_not_the_anchored_one_is_not_used() {
    let mut agent = ChainAgent {
        chain_id: 31337,
        card_hash: Some("0xAAAA".into()),
        ..ChainAgent::default()
    };
    let mut card = linked(LinkRole::Card, "card", Some(card("card name", "s")));
    card.hash = Some("0xbbbb".into());
    let refused = build_profile(&agent, std::slice::from_ref(&card));
    assert_eq!(refused.card_status, "hash_mismatch");
    assert_eq!(refused.name, None);
    assert!(refused.skills.is_empty());
    card.hash = Some("0xaaaa".into());
    let used = build_profile(&agent, std::slice::from_ref(&card));
    assert_eq!(used.card_status, "ok");
    assert_eq!(used.name.as_deref(), Some("card name"));
    // With the off-chain card refused, the contract's own card JSON stands in.
    agent.card = Some(r#"{"name":"onchain name","skills":[]}"#.into());
    card.hash = Some("0xbbbb".into());
    let fallback = build_profile(&agent, std::slice::from_ref(&card));
    assert_eq!(fallback.name.as_deref(), Some("onchain name"));
}

#[test]
fn a_card_not_fetched_yet_is_pending() {
    let agent = ChainAgent::default();
    let pending = build_profile(&agent, &[linked(LinkRole::Card, "card", None)]);
    assert_eq!(pending.card_status, "pending");
    assert_eq!(pending.card_uri.as_deref(), Some("card"));
}

#[test]
fn files_that_name_the_agent_back_verify_it_unless_fetched_over_http() {
    let agent = erc8004_agent("7");
    let reg = linked(
        LinkRole::Registration,
        "reg",
        Some(registration("a", "7", false)),
    );
    let domain = linked(
        LinkRole::Domain,
        "domain",
        Some(registration("a", "7", false)),
    );
    let verified = build_profile(&agent, &[reg.clone(), domain.clone()]);
    assert_eq!(verified.registration_verified, Some(true));
    assert_eq!(verified.domain_verified, Some(true));
    let other = linked(
        LinkRole::Registration,
        "reg",
        Some(registration("a", "8", false)),
    );
    let wrong = build_profile(&agent, &[other, domain.clone()]);
    assert_eq!(wrong.registration_verified, Some(false));
    let mut insecure = reg.clone();
    insecure.source = Some("http://reg".into());
    let plain = build_profile(&agent, &[insecure, domain]);
    assert_eq!(plain.registration_verified, Some(false));
    assert_eq!(plain.domain_verified, Some(true));
    let contract = build_profile(&ChainAgent::default(), &[reg]);
    assert_eq!(
        contract.registration_verified, None,
        "only ERC-8004 agents are verified"
    );
}

#[test]
fn x402_comes_from_the_file_the_card_or_the_contracts_terms() {
    let agent = erc8004_agent("7");
    let plain = linked(
        LinkRole::Registration,
        "reg",
        Some(registration("a", "7", false)),
    );
    assert!(!build_profile(&agent, std::slice::from_ref(&plain)).x402);
    let x402 = linked(
        LinkRole::Registration,
        "reg",
        Some(registration("a", "7", true)),
    );
    assert!(build_profile(&agent, &[x402]).x402);
    let paying = ChainAgent {
        card: Some(r#"{"payment":{"payTo":"0x00000000000000000000000000000000000000aa"}}"#.into()),
        ..ChainAgent::default()
    };
    assert!(build_profile(&paying, &[]).x402);
    let zero = ChainAgent {
        card: Some(r#"{"payment":{"payTo":"0x0000000000000000000000000000000000000000"}}"#.into()),
        ..ChainAgent::default()
    };
    assert!(!build_profile(&zero, &[]).x402);
}

#[test]
fn the_first_readable_card_wins_and_the_contracts_own_card_only_stands_in() {
    let agent = ChainAgent::default();
    let first = linked(LinkRole::Card, "a", Some(card("first", "s1")));
    let second = linked(LinkRole::Card, "b", Some(card("second", "s2")));
    let chosen = build_profile(&agent, &[first.clone(), second]);
    assert_eq!(chosen.name.as_deref(), Some("first"));
    let onchain = linked(
        LinkRole::Onchain,
        "eip155:1:0xabc",
        Some(card("onchain", "s3")),
    );
    let with_onchain = build_profile(&agent, &[first, onchain.clone()]);
    assert_eq!(with_onchain.name.as_deref(), Some("first"));
    let only_onchain = build_profile(&agent, &[onchain]);
    assert_eq!(only_onchain.name.as_deref(), Some("onchain"));
    assert_eq!(
        only_onchain.card_status, "none",
        "the contract's card is not a linked card"
    );
}

#[test]
fn the_agents_own_tags_are_kept_apart_from_its_skills_in_lower_case_once_each() {
    let agent = ChainAgent {
        tags: vec![
            "Research".into(),
            " translation ".into(),
            "research".into(),
            "  ".into(),
        ],
        ..ChainAgent::default()
    };
    let card = linked(LinkRole::Card, "card", Some(card("card name", "s")));
    let profile = build_profile(&agent, std::slice::from_ref(&card));
    assert_eq!(profile.tags, ["research", "translation"]);
    assert_eq!(
        profile.skills.len(),
        1,
        "the card's skills stay as they are"
    );
    assert!(
        build_profile(&ChainAgent::default(), &[card])
            .tags
            .is_empty()
    );
}
