//! Agent Cards and registration files as published in public repositories
//! (`tests/fixtures/wild/`, sources in its SOURCES.md): each is read as the indexer reads a
//! document of unknown kind (and proofs as a domain proof is read), and must be usable, of the
//! right kind, with what matters in it.

use agentindex_indexer::documents::check::read;
use agentindex_indexer::documents::{Expect, Projection, Report, Severity};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/wild/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Reads `name` as `expect`; panics unless it is usable (no error lints).
fn usable(name: &str, expect: Expect) -> (Projection, Report) {
    let mut report = Report::default();
    let projection = read(&fixture(name), expect, &mut report)
        .unwrap_or_else(|| panic!("{name}: nothing read: {:?}", report.lints));
    let errors: Vec<_> = report
        .lints
        .iter()
        .filter(|l| l.severity == Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}");
    (projection, report)
}

fn codes(report: &Report) -> Vec<&str> {
    report.lints.iter().map(|l| l.code).collect()
}

#[test]
fn registration_files_from_the_wild_read_as_registration_files() {
    for (name, services, registrations) in [
        ("orbs-spot-agent-registration.json", 5, 0),
        ("jernau-agent-registration.json", 4, 1),
        ("roger-agent-registration.json", 3, 0),
        ("nova-agent-registration.json", 1, 0),
    ] {
        let (projection, _) = usable(name, Expect::Any);
        let Projection::Registration(file) = projection else {
            panic!("{name} read as a card");
        };
        assert!(file.name.is_some(), "{name}");
        assert_eq!(file.services.len(), services, "{name}");
        assert_eq!(file.registrations.len(), registrations, "{name}");
    }
    let (Projection::Registration(jernau), _) =
        usable("jernau-agent-registration.json", Expect::Any)
    else {
        unreachable!()
    };
    assert_eq!(
        jernau.registrations[0].agent_id, "22731",
        "an id written as text"
    );
    assert_eq!(
        jernau.a2a_card_urls()[0],
        "https://jernau.extropy.io/a2a/.well-known/agent-card.json"
    );
    // `capabilities` as a list of words in a registration file: kept as an unknown field.
    let (_, report) = usable("roger-agent-registration.json", Expect::Any);
    assert!(!codes(&report).contains(&"json.type.object"), "{report:?}");
}

#[test]
fn domain_proofs_from_the_wild_are_valid_for_their_purpose() {
    for (name, registry) in [
        (
            "agent-vault-agent-registration.json",
            "eip155:84532:0x68b49797416c2402465F69f8F3235A7e1C720A3b",
        ),
        (
            "sibylcap-agent-registration.json",
            "eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432",
        ),
    ] {
        for expect in [Expect::Registration, Expect::Any] {
            let (projection, report) = usable(name, expect);
            let Projection::Registration(proof) = projection else {
                panic!("{name} as {expect:?}: read as a card");
            };
            assert_eq!(proof.registrations.len(), 1, "{name}");
            assert_eq!(proof.registrations[0].agent_registry, registry, "{name}");
            assert!(
                codes(&report).contains(&"registration.proof_only"),
                "{name}"
            );
        }
    }
}

#[test]
fn cards_from_the_wild_read_as_cards_with_their_skills() {
    for (name, skills, url) in [
        ("base-ai-8004-agent-card.json", 1, "http://localhost:3000"),
        ("mangesh-agent-card.json", 1, "https://mangeshbide.tech/a2a"),
        (
            "meok-accounting-agent-card.json",
            5,
            "https://mcp.meok.ai/accounting-ai-mcp/a2a",
        ),
    ] {
        let (projection, _) = usable(name, Expect::Any);
        let Projection::Card(card) = projection else {
            panic!("{name} read as a registration file");
        };
        assert_eq!(card.skills.len(), skills, "{name}");
        assert_eq!(card.interfaces[0].url, url, "{name}");
    }
}
