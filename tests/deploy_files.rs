//! The deployment files stay true to the code: `docker build` cannot run here, so the
//! Dockerfile's build steps are checked against the repository (every file it copies exists and
//! is not ignored, the toolchain is new enough, the binary it builds and starts is the one Cargo
//! produces); every shipped config loads; compose, systemd and Kubernetes name real files, the
//! binary and its probes.

use agentindex_indexer::config::Config;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The binary's file name as Cargo builds it.
fn binary() -> String {
    Path::new(env!("CARGO_BIN_EXE_agentindex"))
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Dockerfile instructions, continuation lines joined, comments dropped.
fn instructions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || (line.is_empty() && current.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

#[test]
fn the_dockerfile_builds_from_files_that_exist_and_runs_the_binary_cargo_makes() {
    let dockerfile = read("deploy/Dockerfile");
    let ignored: Vec<String> = read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let steps = instructions(&dockerfile);
    let bin = binary();

    // The builder's toolchain is at least the workspace's rust-version.
    let manifest = read("Cargo.toml");
    let wanted: Vec<u32> = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .expect("rust-version in Cargo.toml")
        .trim_matches('"')
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    let builder = steps
        .iter()
        .find_map(|s| s.strip_prefix("FROM rust:"))
        .expect("a rust builder stage");
    let have: Vec<u32> = builder
        .split(['-', ' '])
        .next()
        .unwrap()
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(
        have >= wanted,
        "builder rust:{builder} is older than {wanted:?}"
    );

    let mut copied = 0;
    for step in &steps {
        let Some(args) = step.strip_prefix("COPY ") else {
            continue;
        };
        if args.starts_with("--from=") {
            continue;
        }
        let parts: Vec<&str> = args.split_whitespace().collect();
        for source in &parts[..parts.len() - 1] {
            assert!(repo().join(source).exists(), "COPY {source}: no such file");
            assert!(
                !ignored
                    .iter()
                    .any(|i| source == i || source.starts_with(&format!("{i}/"))),
                "COPY {source}: excluded by .dockerignore"
            );
            copied += 1;
        }
    }
    assert!(copied > 5, "the build copies the sources");
    let build = steps
        .iter()
        .find(|s| s.starts_with("RUN cargo build"))
        .expect("a cargo build step");
    assert!(
        build.contains("--release") && build.contains("--locked"),
        "{build}"
    );
    let words: Vec<&str> = build.split_whitespace().collect();
    let built = words.windows(2).find(|w| w[0] == "--bin").map(|w| w[1]);
    assert_eq!(built, Some(bin.as_str()), "{build}");
    let from_build: Vec<&str> = steps
        .iter()
        .find(|s| s.starts_with("COPY --from=build"))
        .expect("the binary copied from the builder")
        .split_whitespace()
        .collect();
    let installed = format!("/usr/local/bin/{bin}");
    assert_eq!(
        from_build[2..],
        [
            format!("/src/target/release/{bin}").as_str(),
            installed.as_str()
        ]
    );
    let entrypoint = steps
        .iter()
        .find(|s| s.starts_with("ENTRYPOINT"))
        .expect("an entrypoint");
    assert_eq!(entrypoint, &format!("ENTRYPOINT [\"{installed}\"]"));
    // The default command is a real subcommand.
    let cmd = steps.iter().find(|s| s.starts_with("CMD")).unwrap();
    assert!(cmd.contains("\"run\""), "{cmd}");
}

/// The keys the config types accept in `section` (a dotted path; `chains` and its lists are
/// arrays of tables), as serde names them when it meets a key it does not know.
fn accepted_keys(section: &str) -> Vec<String> {
    let header = match section {
        "" => String::new(),
        "chains" => "[[chains]]".into(),
        s if s.starts_with("chains.") && s != "chains.erc8004" && s != "chains.x402" => {
            format!("[[chains]]\n[[{s}]]")
        }
        s if s.starts_with("chains.") => format!("[[chains]]\n[{s}]"),
        "liveness.credentials" => "[[liveness.credentials]]".into(),
        "cardano" => "[[cardano]]".into(),
        "cardano.masumi" => "[[cardano]]\n[cardano.masumi]".into(),
        s => format!("[{s}]"),
    };
    let text = format!("{header}\n__probe__ = 1\n");
    let error = Config::from_toml_and_env(&text, Path::new("probe"), Vec::new())
        .err()
        .unwrap_or_else(|| panic!("{section}: an unknown key was accepted"))
        .to_string();
    let listed = error
        .split_once("expected one of ")
        .or_else(|| error.split_once("expected "))
        .unwrap_or_else(|| panic!("{section}: {error}"))
        .1;
    // "`a`", "`a` or `b`", "one of `a`, `b`, `c`", then the key path on its own line.
    listed
        .lines()
        .next()
        .unwrap_or_default()
        .split(", ")
        .flat_map(|part| part.split(" or "))
        .map(|name| name.trim().trim_matches('`').to_string())
        .collect()
}

#[test]
fn the_example_config_shows_every_key_the_config_types_accept() {
    let example = read("deploy/agentindex.example.toml");
    // Keys shown, set or commented out, by section.
    let mut shown: Vec<(String, String)> = Vec::new();
    let mut section = String::new();
    for line in example.lines() {
        let line = line.trim().trim_start_matches('#').trim();
        if let Some(header) = line.strip_prefix('[') {
            let name = header.trim_start_matches('[');
            section = name[..name.find(']').unwrap_or(name.len())].to_string();
            continue;
        }
        if let Some((key, _)) = line.split_once(" = ")
            && key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            shown.push((section.clone(), key.to_string()));
        }
    }
    let sections = [
        "",
        "database",
        "api",
        "api.caches",
        "api.connections",
        "api.websocket",
        "api.query_limits",
        "api.reads",
        "documents",
        "liveness",
        "liveness.credentials",
        "reputation",
        "reputation.weights",
        "reputation.feedback",
        "reputation.trust",
        "chains",
        "chains.erc8004",
        "chains.factories",
        "chains.registries",
        "chains.payment_tokens",
        "chains.x402",
        "cardano",
        "cardano.masumi",
    ];
    let mut missing = Vec::new();
    for section in sections {
        let keys = accepted_keys(section);
        assert!(
            keys.len() > 1 || section == "database",
            "{section}: {keys:?}"
        );
        for key in keys {
            let is_table = sections.contains(&format!("{section}.{key}").trim_start_matches('.'));
            if !is_table && !shown.contains(&(section.to_string(), key.clone())) {
                missing.push(format!("{section}.{key}"));
            }
        }
    }
    assert!(
        shown.contains(&("chains".into(), "network".into())),
        "the preset key is shown too"
    );
    assert!(
        missing.is_empty(),
        "deploy/agentindex.example.toml leaves out {missing:?}"
    );
}

#[test]
fn every_shipped_config_loads() {
    let mut configs = vec![repo().join("deploy/agentindex.example.toml")];
    for entry in std::fs::read_dir(repo().join("deploy/networks")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            configs.push(path);
        }
    }
    assert_eq!(configs.len(), 5, "the example and four presets");
    for path in configs {
        let config = Config::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!config.chains.is_empty(), "{}", path.display());
    }
    // The Kubernetes ConfigMaps' configs too: SQLite's, and PostgreSQL's.
    for (file, database) in [
        ("deploy/kubernetes/agentindex.yaml", "sqlite://"),
        ("deploy/kubernetes/agentindex-postgres.yaml", "postgres://"),
    ] {
        let manifest = read(file);
        let start = manifest.find("config.toml: |").unwrap() + "config.toml: |".len();
        let end = manifest[start..].find("---").unwrap() + start;
        let text: String = manifest[start..end]
            .lines()
            .map(|l| l.strip_prefix("    ").unwrap_or(l.trim()))
            .collect::<Vec<_>>()
            .join("\n");
        let config = Config::from_toml_and_env(&text, Path::new(file), Vec::new()).unwrap();
        assert_eq!(config.chains[0].chain_id, 8453, "{file}");
        assert!(config.database.url.starts_with(database), "{file}");
    }
}

#[test]
fn compose_systemd_and_kubernetes_name_real_files_the_binary_and_its_probes() {
    let bin = binary();
    for file in ["deploy/compose.yaml", "deploy/compose.postgres.yaml"] {
        let compose = read(file);
        assert!(compose.contains("dockerfile: deploy/Dockerfile"), "{file}");
        for line in compose.lines() {
            if let Some(mount) = line.trim().strip_prefix("- ./") {
                let mounted = mount.split(':').next().unwrap();
                assert!(
                    repo().join("deploy").join(mounted).exists(),
                    "{file} mounts {mounted}"
                );
            }
        }
    }
    // On PostgreSQL: one indexer, two API replicas, the load balancer naming both.
    let compose = read("deploy/compose.postgres.yaml");
    for wanted in [
        "command: [\"index\"",
        "api-1:",
        "api-2:",
        "AGENTINDEX_DATABASE__URL: postgres://",
    ] {
        assert!(compose.contains(wanted), "compose.postgres.yaml: {wanted}");
    }
    let nginx = read("deploy/nginx/agentindex.conf");
    assert!(nginx.contains("server api-1:8080") && nginx.contains("server api-2:8080"));
    let replicas = read("deploy/kubernetes/agentindex-postgres.yaml");
    for wanted in [
        "args: [\"index\"",
        "args: [\"serve\"",
        "replicas: 2",
        "type: Recreate",
        "path: /readyz",
    ] {
        assert!(
            replicas.contains(wanted),
            "agentindex-postgres.yaml: {wanted}"
        );
    }
    let unit = read("deploy/systemd/agentindex.service");
    assert!(unit.contains(&format!("ExecStart=/usr/local/bin/{bin} run --config")));
    assert!(unit.contains("KillSignal=SIGTERM"));
    let kubernetes = read("deploy/kubernetes/agentindex.yaml");
    for probe in [
        "path: /healthz",
        "path: /readyz",
        "replicas: 1",
        "volumeClaimTemplates",
    ] {
        assert!(kubernetes.contains(probe), "{probe}");
    }
}
