use super::*;

const SAMPLE: &str = r#"
[database]
url = "sqlite://data/test.db"

[[chains]]
name = "base-sepolia"
chain_id = 84532
rpc = ["https://rpc-1.example", "https://rpc-2.example"]
finality = "finalized"
start_block = 37174254

[chains.erc8004]
identity = "0x8004A818BFB912233c491871b3d84c89A494BD9e"
reputation = "0x8004B663056A597Dffe9eCcC1965A193B7388713"

[[chains.factories]]
address = "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707"

[[chains.payment_tokens]]
address = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
symbol = "USDC"
decimals = 6
"#;

fn load(text: &str, vars: &[(&str, &str)]) -> ConfigResult<Config> {
    Config::from_toml_and_env(
        text,
        Path::new("test.toml"),
        vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
    )
}

fn key_error(result: ConfigResult<Config>) -> (String, String) {
    match result {
        Err(ConfigError::Key { key, message }) => (key, message),
        other => panic!("expected a key error, got {other:?}"),
    }
}

#[test]
fn design_example_loads_with_defaults_filled_in() {
    let config = load(SAMPLE, &[]).unwrap();
    assert_eq!(config.database.url, "sqlite://data/test.db");
    assert_eq!(config.api.listen.to_string(), "127.0.0.1:8080");
    assert!(!config.documents.allow_private_addresses);
    let chain = &config.chains[0];
    assert_eq!(chain.finality, Finality::Tag);
    assert_eq!(chain.rpc.len(), 2);
    assert_eq!(chain.erc8004.as_ref().unwrap().validation, None);
    assert_eq!(chain.factories[0].start_block, None);
    assert_eq!(chain.payment_tokens[0].decimals, 6);
    assert_eq!(chain.on_deep_reorg, DeepReorg::Stop);
    assert_eq!(chain.max_block_range, defaults::max_block_range());
}

#[test]
fn environment_overrides_scalars_nested_keys_and_array_entries() {
    let config = load(
        SAMPLE,
        &[
            ("AGENTINDEX_DATABASE__URL", "sqlite:///tmp/x.db"),
            ("AGENTINDEX_DOCUMENTS__ALLOW_PRIVATE_ADDRESSES", "true"),
            ("AGENTINDEX_CHAINS__0__FINALITY", "12"),
            ("AGENTINDEX_CHAINS__0__RPC", r#"["http://127.0.0.1:8545"]"#),
            (
                "AGENTINDEX_CHAINS__0__ERC8004__VALIDATION",
                "0x8004Cb1BF31DAf7788923b405b754f57acEB4272",
            ),
            ("AGENTINDEX_CHAINS__0__ON_DEEP_REORG", "rewind"),
            ("AGENTINDEX_ANVIL", "/not/a/config/key"),
        ],
    )
    .unwrap();
    assert_eq!(config.database.url, "sqlite:///tmp/x.db");
    assert!(config.documents.allow_private_addresses);
    let chain = &config.chains[0];
    assert_eq!(chain.finality, Finality::Depth(12));
    assert_eq!(chain.rpc, vec!["http://127.0.0.1:8545".to_string()]);
    assert!(chain.erc8004.as_ref().unwrap().validation.is_some());
    assert_eq!(chain.on_deep_reorg, DeepReorg::Rewind);
}

#[test]
fn environment_can_add_a_whole_chain() {
    let config = load(
        "",
        &[
            ("AGENTINDEX_CHAINS__0__NAME", "local"),
            ("AGENTINDEX_CHAINS__0__CHAIN_ID", "31337"),
            ("AGENTINDEX_CHAINS__0__RPC", r#"["http://127.0.0.1:8545"]"#),
        ],
    )
    .unwrap();
    assert_eq!(config.chains[0].chain_id, 31337);
}

#[test]
fn errors_name_the_bad_key() {
    let (key, message) = key_error(load(
        SAMPLE,
        &[(
            "AGENTINDEX_DOCUMENTS__IPFS_GATEWAYS",
            "[\"ftp://gw.example/ipfs/\"]",
        )],
    ));
    assert_eq!(key, "documents.ipfs_gateways[0]");
    assert!(message.contains("ftp://gw.example"), "{message}");

    let (key, message) = key_error(load(&SAMPLE.replace("\"finalized\"", "\"soon\""), &[]));
    assert_eq!(key, "chains[0].finality");
    assert!(message.contains("soon"), "{message}");

    let (key, _) = key_error(load(
        &SAMPLE.replace("0x5FC8d32690cc91D4c39d9d3abcBD16989F875707", "0x12"),
        &[],
    ));
    assert_eq!(key, "chains[0].factories[0].address");

    let (key, message) = key_error(load(
        &SAMPLE.replace("start_block = 37174254", "strat_block = 1"),
        &[],
    ));
    assert_eq!(key, "chains[0].strat_block");
    assert!(message.contains("unknown field"), "{message}");

    let (key, _) = key_error(load(SAMPLE, &[("AGENTINDEX_CHAINS__0__CHAIN_ID", "\"x\"")]));
    assert_eq!(key, "chains[0].chain_id");

    let (key, _) = key_error(load(
        &SAMPLE.replace(
            "rpc = [\"https://rpc-1.example\", \"https://rpc-2.example\"]",
            "rpc = []",
        ),
        &[],
    ));
    assert_eq!(key, "chains[0].rpc");

    let (key, message) = key_error(load(
        &SAMPLE.replace("https://rpc-2.example", "ws://x"),
        &[],
    ));
    assert_eq!(key, "chains[0].rpc[1]");
    assert!(message.contains("ws://x"));
}

#[test]
fn duplicate_chain_ids_are_rejected() {
    let twice = format!(
        "{SAMPLE}\n[[chains]]\nname = \"again\"\nchain_id = 84532\nrpc = [\"http://127.0.0.1:1\"]\n"
    );
    let (key, _) = key_error(load(&twice, &[]));
    assert_eq!(key, "chains[1].chain_id");
}

#[test]
fn bad_environment_paths_name_the_variable() {
    let err = load(SAMPLE, &[("AGENTINDEX_CHAINS__5__NAME", "x")]).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Env { var, .. } if var == "AGENTINDEX_CHAINS__5__NAME"),
        "{err}"
    );
    let err = load(SAMPLE, &[("AGENTINDEX_DATABASE__URL__DEEPER", "x")]).unwrap_err();
    assert!(matches!(err, ConfigError::Env { .. }), "{err}");
}

#[test]
fn syntax_errors_name_the_file() {
    let err = load("[database\nurl=", &[]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("config test.toml is not valid TOML"),
        "{err}"
    );
}

#[test]
fn the_shipped_example_config_loads() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/agentindex.example.toml"
    ));
    let config = Config::load(path).unwrap();
    assert_eq!(config.documents.requests_per_host_per_second, 5);
    assert!(config.documents.trusted_keys.is_empty());
    let with_key = std::fs::read_to_string(path).unwrap().replace(
        "# trusted_keys = [{ kty = \"EC\", crv = \"P-256\", kid = \"issuer-1\", x = \"…\", y = \"…\" }]",
        "trusted_keys = [{ kty = \"OKP\", crv = \"Ed25519\", kid = \"k\", x = \"4K4gSB_6wAWgnTIMmrz1mVbR-G_-CJxp7lWHE4Hfpnc\" }]",
    );
    let config = load(&with_key, &[]).unwrap();
    assert_eq!(
        config.documents.trusted_keys[0].common.key_id.as_deref(),
        Some("k")
    );
}

#[test]
fn reputation_parameters_and_dust_are_checked() {
    let config = load(SAMPLE, &[]).unwrap();
    assert_eq!(config.reputation, super::ReputationConfig::default());
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__CIRCULAR_DISCOUNT", "2")],
    ));
    assert_eq!(key, "reputation.circular_discount");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__HALF_LIFE_DAYS", "0")],
    ));
    assert_eq!(key, "reputation.half_life_days");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__WEIGHTS__FEEDBACK", "-1")],
    ));
    assert_eq!(key, "reputation.weights.feedback");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__FEEDBACK__UNPAID_CAP", "-1")],
    ));
    assert_eq!(key, "reputation.feedback.unpaid_cap");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__TRUST__DAMPING", "1")],
    ));
    assert_eq!(key, "reputation.trust.damping");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__TRUST__INTERVAL_BLOCKS", "0")],
    ));
    assert_eq!(key, "reputation.trust.interval_blocks");
    let (key, message) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__FEEDS_KEPT", "1001")],
    ));
    assert_eq!(key, "reputation.feeds_kept");
    assert!(message.contains("at most 1000"), "{message}");
    let kept = load(SAMPLE, &[("AGENTINDEX_REPUTATION__FEEDS_KEPT", "0")]).unwrap();
    assert_eq!(kept.reputation.feeds_kept, 0, "0 turns stored feeds off");
    let all_zero: Vec<(&str, &str)> = ["PAYMENTS", "TRUST", "FEEDBACK", "VALIDATIONS", "RATINGS"]
        .iter()
        .map(|w| {
            let var: &'static str =
                Box::leak(format!("AGENTINDEX_REPUTATION__WEIGHTS__{w}").into());
            (var, "0")
        })
        .collect();
    let (key, _) = key_error(load(SAMPLE, &all_zero));
    assert_eq!(key, "reputation.weights");
    let config = load(
        SAMPLE,
        &[("AGENTINDEX_REPUTATION__WEIGHTS__PAYMENTS", "0.9")],
    )
    .unwrap();
    assert_eq!(config.reputation.weights.payments, 0.9);
    let with_dust = format!(
        "{SAMPLE}\n[[chains.payment_tokens]]\naddress = \"0x036CbD53842c5426634e7929541eC2318f3dCF7e\"\nsymbol = \"USDC\"\ndecimals = 6\ndust = \"0.001\"\n"
    );
    let config = load(&with_dust, &[]).unwrap();
    let token = config.chains[0].payment_tokens.last().unwrap();
    assert_eq!(
        token.dust_units().unwrap(),
        alloy::primitives::U256::from(1_000u64)
    );
    let (key, message) = key_error(load(&with_dust.replace("0.001", "0.0000001"), &[]));
    assert!(key.ends_with(".dust"), "{key}");
    assert!(message.contains("0.0000001"), "{message}");
}

#[test]
fn api_limits_and_cors_origins_are_checked() {
    let config = load(SAMPLE, &[]).unwrap();
    assert_eq!(config.api.cors_origins, vec!["*".to_string()]);
    let (key, _) = key_error(load(SAMPLE, &[("AGENTINDEX_API__CLIENT_BURST", "0")]));
    assert_eq!(key, "api.client_burst");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_API__REQUESTS_PER_MINUTE_PER_CLIENT", "0")],
    ));
    assert_eq!(key, "api.requests_per_minute_per_client");
    let (key, _) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_API__SERVER_MS_PER_SECOND_PER_CLIENT", "0")],
    ));
    assert_eq!(key, "api.server_ms_per_second_per_client");
    assert_eq!(config.api.server_ms_burst_per_client, 1_000);
    assert_eq!(config.api.low_priority_after_ms_per_client, 250);
    assert_eq!(config.api.low_priority_cores, 0.5);
    assert_eq!(config.api.low_priority_above_complexity, 1_000);
    let (key, message) = key_error(load(SAMPLE, &[("AGENTINDEX_API__LOW_PRIORITY_CORES", "0")]));
    assert_eq!(key, "api.low_priority_cores");
    assert!(message.contains("from 0.01 to 4096"), "{message}");
    let with_origins =
        format!("{SAMPLE}\n[api]\ncors_origins = [\"https://ok.example\", \"ftp://no\"]\n");
    let (key, message) = key_error(load(&with_origins, &[]));
    assert_eq!(key, "api.cors_origins[1]");
    assert!(message.contains("ftp://no"), "{message}");
}

#[test]
fn connection_and_websocket_limits_have_defaults_overrides_and_checks() {
    let config = load(SAMPLE, &[]).unwrap();
    assert_eq!(config.api.connections.header_read_timeout_secs, 10);
    assert_eq!(config.api.connections.max_connections_per_client, 256);
    assert!(config.api.connections.trusted_proxies.is_empty());
    assert_eq!(config.api.websocket.max_message_bytes, 64 * 1024);
    assert_eq!(config.api.websocket.max_subscriptions_per_connection, 50);
    assert_eq!(config.api.websocket.max_replay_blocks, 100_000);
    assert_eq!(config.api.websocket.idle_timeout_secs, 60);
    let (named, message) = key_error(load(
        SAMPLE,
        &[(
            "AGENTINDEX_API__UNLIMITED_CLIENTS",
            r#"["10.0.0.7", "2001:db8::5"]"#,
        )],
    ));
    assert_eq!(named, "api.unlimited_clients[1]");
    assert!(message.contains("a /64 or wider"), "{message}");
    let (named, message) = key_error(load(
        SAMPLE,
        &[("AGENTINDEX_API__WEBSOCKET__IDLE_TIMEOUT_SECS", "100000")],
    ));
    assert_eq!(
        (named.as_str(), message.as_str()),
        (
            "api.websocket.idle_timeout_secs",
            "must be at most 86400 (a day)"
        )
    );
    let config = load(
        SAMPLE,
        &[
            (
                "AGENTINDEX_API__CONNECTIONS__TRUSTED_PROXIES",
                r#"["10.0.0.0/8", "fd00::1"]"#,
            ),
            ("AGENTINDEX_API__WEBSOCKET__MAX_REPLAY_BLOCKS", "5000"),
        ],
    )
    .unwrap();
    let proxies = &config.api.connections.trusted_proxies;
    assert_eq!(proxies[0].to_string(), "10.0.0.0/8");
    assert_eq!(proxies[1].to_string(), "fd00::1/128");
    assert_eq!(config.api.websocket.max_replay_blocks, 5_000);
    for (var, key) in [
        (
            "AGENTINDEX_API__CONNECTIONS__HEADER_READ_TIMEOUT_SECS",
            "api.connections.header_read_timeout_secs",
        ),
        (
            "AGENTINDEX_API__CONNECTIONS__MAX_CONNECTIONS",
            "api.connections.max_connections",
        ),
        (
            "AGENTINDEX_API__WEBSOCKET__MAX_SUBSCRIPTIONS_PER_CONNECTION",
            "api.websocket.max_subscriptions_per_connection",
        ),
        (
            "AGENTINDEX_API__WEBSOCKET__MAX_REPLAY_BLOCKS",
            "api.websocket.max_replay_blocks",
        ),
        (
            "AGENTINDEX_API__WEBSOCKET__IDLE_TIMEOUT_SECS",
            "api.websocket.idle_timeout_secs",
        ),
    ] {
        let (named, message) = key_error(load(SAMPLE, &[(var, "0")]));
        assert_eq!(
            (named.as_str(), message.as_str()),
            (key, "must be at least 1")
        );
    }
    let (key, message) = key_error(load(
        SAMPLE,
        &[(
            "AGENTINDEX_API__CONNECTIONS__TRUSTED_PROXIES",
            r#"["10.0.0.0/33"]"#,
        )],
    ));
    assert_eq!(key, "api.connections.trusted_proxies");
    assert!(message.contains("10.0.0.0/33"), "{message}");
}

#[test]
fn network_presets_fill_in_the_chain_and_keep_what_the_entry_sets() {
    let config = load(
        r#"
[database]
url = "sqlite://data/base.db"

[[chains]]
network = "base"
rpc = ["https://base.example"]

[[chains]]
network = "base-sepolia"
name = "testnet"
rpc = ["https://sepolia.base.example"]
start_block = 40000000
"#,
        &[],
    )
    .unwrap();
    let base = &config.chains[0];
    assert_eq!((base.name.as_str(), base.chain_id), ("base", 8453));
    assert_eq!(base.start_block, StartBlock::At(41_663_799));
    let registries = base.erc8004.as_ref().unwrap();
    assert_eq!(
        registries.identity,
        Some(
            "0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"
                .parse()
                .unwrap()
        )
    );
    assert_eq!(registries.validation, None, "none announced on mainnets");
    assert_eq!(base.payment_tokens.len(), 1);
    assert_eq!(
        base.payment_tokens[0].address,
        "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
            .parse::<alloy::primitives::Address>()
            .unwrap()
    );
    assert_eq!(base.payment_tokens[0].decimals, 6);
    let testnet = &config.chains[1];
    assert_eq!(testnet.name, "testnet", "the entry's own name wins");
    assert_eq!(
        testnet.start_block,
        StartBlock::At(40_000_000),
        "and its start block"
    );
    assert_eq!(testnet.chain_id, 84_532);
    assert!(testnet.erc8004.as_ref().unwrap().validation.is_some());
}

#[test]
fn network_preset_errors_name_the_key() {
    let chain = |body: &str| {
        format!(
            "[database]\nurl = \"sqlite://x.db\"\n[[chains]]\nrpc = [\"https://r.example\"]\n{body}\n"
        )
    };
    let (key, message) = key_error(load(&chain("network = \"basse\""), &[]));
    assert_eq!(key, "chains[0].network");
    assert!(
        message.contains("basse") && message.contains("base-sepolia"),
        "{message}"
    );
    let (key, message) = key_error(load(&chain("network = \"base\"\nchain_id = 1"), &[]));
    assert_eq!(key, "chains[0].chain_id");
    assert!(message.contains("8453"), "{message}");
    let (key, _) = key_error(load(&chain("network = 5"), &[]));
    assert_eq!(key, "chains[0].network");
}

#[test]
fn read_limits_default_override_from_the_environment_and_refuse_zero() {
    let config = load(SAMPLE, &[]).unwrap();
    assert_eq!(config.api.reads, ReadsConfig::default());
    assert_eq!(config.api.reads.max_rows_per_request, 50_000);
    let config = load(SAMPLE, &[("AGENTINDEX_API__READS__MAX_LIST_ARGUMENT", "7")]).unwrap();
    assert_eq!(config.api.reads.max_list_argument, 7);
    for key in [
        "max_rows_per_request",
        "max_list_argument",
        "query_time_limit_secs",
    ] {
        let text = format!("{SAMPLE}\n[api.reads]\n{key} = 0\n");
        let (named, message) = key_error(load(&text, &[]));
        assert_eq!(named, format!("api.reads.{key}"));
        assert_eq!(message, "must be at least 1");
    }
}
