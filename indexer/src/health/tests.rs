use super::*;

fn board_with_two_endpoints() -> (Arc<HealthBoard>, Arc<ChainHealth>) {
    let board = HealthBoard::new();
    let chain = board.chain(
        8453,
        "base",
        [
            "https://a.example/v2/***".to_string(),
            "https://b.example/".to_string(),
        ],
    );
    (board, chain)
}

#[test]
fn endpoints_start_unknown_and_the_chain_starting() {
    let (board, _) = board_with_two_endpoints();
    let [report] = board.reports().try_into().unwrap();
    assert_eq!(report.state, ChainState::Starting);
    assert!(
        report
            .endpoints
            .iter()
            .all(|e| e.state == EndpointState::Unknown)
    );
    assert!(
        report
            .endpoints
            .iter()
            .all(|e| e.error.is_none() && e.last_answer.is_none())
    );
}

#[test]
fn a_failure_is_news_once_and_an_answer_ends_it() {
    let (_, chain) = board_with_two_endpoints();
    let mut endpoint = Endpoint::new("x".into());
    assert!(endpoint.failed(Problem::Unreachable, "refused"));
    assert!(!endpoint.failed(Problem::Unreachable, "refused again"));
    assert!(endpoint.failed(Problem::Rejected, "401"));
    assert_eq!(endpoint.answered(), Some(Problem::Rejected));
    assert_eq!(endpoint.report().state, EndpointState::Answering);
    assert!(endpoint.report().error.is_none());

    chain.failed(1, Problem::Rejected, "HTTP 401: Must be authenticated!");
    let report = chain.report();
    assert_eq!(report.endpoints[0].state, EndpointState::Unknown);
    assert_eq!(report.endpoints[1].state, EndpointState::Rejected);
    assert_eq!(
        report.endpoints[1].error.as_deref(),
        Some("HTTP 401: Must be authenticated!")
    );
    assert!(
        report.endpoints[1]
            .check
            .as_deref()
            .unwrap()
            .contains("API key")
    );
    assert!(!chain.has_answered(1));
    chain.answered(1);
    assert!(chain.has_answered(1));
    assert_eq!(chain.report().endpoints[1].state, EndpointState::Answering);
}

#[test]
fn a_wrong_chain_stays_though_the_endpoint_answers() {
    let mut endpoint = Endpoint::new("x".into());
    endpoint.failed(Problem::WrongChain, "chain id 1, the config says 8453");
    assert_eq!(endpoint.answered(), None);
    let report = endpoint.report();
    assert_eq!(report.state, EndpointState::WrongChain);
    assert!(report.last_answer.is_some());
}

#[test]
fn the_chain_state_follows_its_steps_and_says_what_to_check() {
    let (_, chain) = board_with_two_endpoints();
    chain.failed(0, Problem::Unreachable, "connection refused");
    chain.step_failed(
        "eth_chainId on https://a.example/v2/***: unreachable",
        false,
    );
    let report = chain.report();
    assert_eq!(report.state, ChainState::Failing);
    assert_eq!(report.check.as_deref(), Some(Problem::Unreachable.check()));
    let line = report.trouble().unwrap();
    assert!(line.starts_with("chain base (8453): failing"), "{line}");
    assert!(
        line.contains("https://a.example/v2/*** unreachable: connection refused"),
        "{line}"
    );
    assert!(line.contains("check: the URL's host and port"), "{line}");

    chain.step_succeeded();
    let report = chain.report();
    assert_eq!(report.state, ChainState::Following);
    assert!(report.error.is_none() && report.check.is_none());
    assert_eq!(report.trouble(), None);

    chain.step_failed("wrong chain", true);
    assert_eq!(chain.report().state, ChainState::Stopped);
}

#[test]
fn silence_is_reported_with_how_long_was_waited() {
    let (_, chain) = board_with_two_endpoints();
    chain.silent(0, Duration::from_millis(1500));
    let report = chain.report();
    assert_eq!(report.endpoints[0].state, EndpointState::Silent);
    assert_eq!(
        report.endpoints[0].error.as_deref(),
        Some("no answer within 1.5 s of the first request")
    );
}
