//! A seeded property test of the query budget (`crate::budget`) and of what it guards, here
//! because the subgraph endpoint is the layer above both it and `/graphql`: generated documents (fragments
//! spreading fragments, deep argument values, many aliases, directives, cycles, unknown names,
//! truncated text) go through the budget, the `/graphql` schema executing against a real empty
//! store, and the subgraph planner. Each is refused or answered within a safety bound, the
//! schema refuses exactly what the budget refuses and in its words, and the planner never
//! produces more fields than the budget allows. A failure prints its seed; rerun one case with
//! `AGENTINDEX_FUZZ_SEED=<seed>`.

use crate::budget::QueryBudget;
use crate::graphql::{AgentSchema, schema};
use crate::state::ApiState;
use crate::subgraph::plan::{Item, Plan, Root, What, plan};
use agentindex_indexer::config::Config;
use agentindex_indexer::store::{Dialect, Store};
use async_graphql::Variables;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

/// Cases per run: thousands, in seconds.
const CASES: u64 = 3_000;
/// The most any case may take, refusal or answer: a safety bound against hangs, not a timing.
const SAFETY_BOUND: Duration = Duration::from_secs(10);

/// Fields the generator asks for: real ones of both schemas and a few that are not.
const FIELDS: &[&str] = &[
    "agents",
    "agent",
    "id",
    "name",
    "owner",
    "__typename",
    "indexerStatus",
    "chainId",
    "edges",
    "node",
    "nodes",
    "pageInfo",
    "totalCount",
    "feedback",
    "skills",
    "tags",
    "_meta",
    "block",
    "number",
    "registrationFile",
    "nope",
];
/// Where the generator stops adding selections: past the 16 KiB limit, so some texts are too
/// long, but not far past.
const TEXT_CAP: usize = 20_000;
const TYPES: &[&str] = &["Query", "Agent", "AgentConnection", "Nope"];

/// Writes one random document.
struct Writer<'r> {
    rng: &'r mut StdRng,
    fragments: usize,
    out: String,
}

impl Writer<'_> {
    fn document(&mut self) {
        let shape = self.rng.random_range(0..10);
        self.out += if shape == 0 {
            "query Q($v: Int = 1) "
        } else {
            ""
        };
        self.set(0);
        for fragment in 0..self.fragments {
            let on = TYPES[self.rng.random_range(0..TYPES.len())];
            self.out += &format!("\nfragment F{fragment} on {on} ");
            self.set(1);
        }
        if self.rng.random_ratio(1, 20) {
            // Cut anywhere (on a character boundary): text the parser must refuse cleanly.
            let mut cut = self.rng.random_range(0..=self.out.len());
            while !self.out.is_char_boundary(cut) {
                cut -= 1;
            }
            self.out.truncate(cut);
        }
    }

    fn set(&mut self, depth: usize) {
        self.out += "{ ";
        // Mostly one or two selections, so documents stay near the limits rather than far past.
        let items = if self.rng.random_ratio(1, 8) {
            self.rng.random_range(3..=8)
        } else {
            self.rng.random_range(1..=2)
        };
        for _ in 0..items {
            if self.out.len() > TEXT_CAP {
                break;
            }
            match self.rng.random_range(0..10) {
                0..=6 => self.field(depth),
                7..=8 if self.fragments > 0 => {
                    let spread = self.rng.random_range(0..self.fragments);
                    // Spreading the same fragment several times is the fan-out of the attack.
                    for _ in 0..self.rng.random_range(1..=2) {
                        self.out += &format!("...F{spread} ");
                    }
                }
                _ => {
                    self.out += "... on Query ";
                    self.directives();
                    self.set(depth + 1);
                }
            }
        }
        self.out += "} ";
    }

    fn field(&mut self, depth: usize) {
        if self.rng.random_ratio(1, 4) {
            let alias = self.rng.random_range(0..50);
            self.out += &format!("a{alias}: ");
        }
        self.out += FIELDS[self.rng.random_range(0..FIELDS.len())];
        if self.rng.random_ratio(1, 4) {
            self.out += "(first: 1, where: ";
            let nesting = match self.rng.random_range(0..20) {
                0 => self.rng.random_range(30..3_000),
                _ => self.rng.random_range(0..6),
            };
            self.value(nesting);
            self.out += ")";
        }
        self.out += " ";
        self.directives();
        if depth < 40 && self.rng.random_ratio(2, 5) {
            self.set(depth + 1);
        }
    }

    /// A value nesting lists and objects `nesting` deep.
    fn value(&mut self, nesting: usize) {
        for level in 0..nesting {
            self.out += if level % 2 == 0 { "[" } else { "{k: " };
        }
        self.out += match self.rng.random_range(0..4) {
            0 => "\"s { [ (\"",
            1 => "$v",
            2 => "\"\"\"b\\\"\"\" ]\"\"\"",
            _ => "1.5e3",
        };
        for level in (0..nesting).rev() {
            self.out += if level % 2 == 0 { "]" } else { "}" };
        }
    }

    fn directives(&mut self) {
        for _ in 0..self.rng.random_range(0..3) {
            self.out += "@include(if: true) ";
        }
    }
}

/// The document of case `seed`: a random one, or one of the attacks at a random size.
fn document(seed: u64) -> String {
    let mut rng = StdRng::seed_from_u64(seed);
    match seed % 10 {
        0 => crate::budget::document::tests::fan_out(rng.random_range(5..40)),
        1 => {
            let deep = rng.random_range(10..5_000);
            format!(
                "{{ agents(filter: {{tags: {}\"x\"{}}}) {{ totalCount }} }}",
                "[".repeat(deep),
                "]".repeat(deep)
            )
        }
        2 => {
            let aliases: String = (0..rng.random_range(1..400))
                .map(|i| format!("a{i}: __typename "))
                .collect();
            format!("{{ {aliases} }}")
        }
        3 => valid(&mut rng),
        _ => {
            let fragments = rng.random_range(0..8);
            let mut writer = Writer {
                rng: &mut rng,
                fragments,
                out: String::new(),
            };
            writer.document();
            writer.out
        }
    }
}

/// A query `/graphql` answers, with up to 40 aliases (30 are allowed) and fragments.
fn valid(rng: &mut StdRng) -> String {
    let mut text = String::from("{ ");
    for alias in 0..rng.random_range(0..40) {
        text += &format!("t{alias}: __typename ");
    }
    if rng.random_bool(0.5) {
        text += "indexerStatus { chainId indexedBlock } ";
    }
    let agents = rng.random_bool(0.5);
    if agents {
        text += "agents(first: 2) { totalCount edges { node { id name ...A ...A } } } ";
    }
    text += "...Q } fragment Q on Query { __typename }";
    if agents {
        text += " fragment A on Agent { id owner }";
    }
    text
}

/// Everything a plan holds, counted: what the planner produced.
fn produced(plan: &Plan) -> usize {
    fn items(list: &[Item]) -> usize {
        list.iter()
            .map(|item| {
                1 + match &item.what {
                    What::Typename(_) | What::Column(_) => 0,
                    What::Ref(_, inner) => items(inner),
                    What::Derived(_, list) => items(&list.items),
                }
            })
            .sum()
    }
    fn meta(items: &[crate::subgraph::plan::MetaItem]) -> usize {
        items.iter().map(|item| 1 + meta(&item.items)).sum()
    }
    plan.roots
        .iter()
        .map(|(_, root)| {
            1 + match root {
                Root::List(list) => items(&list.items),
                Root::Single { items: inner, .. } => items(inner),
                Root::Meta(inner) => meta(inner),
                Root::Typename => 0,
            }
        })
        .sum()
}

async fn serving_schema() -> (tempfile::TempDir, AgentSchema) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fuzz.db").display());
    let store = Store::open(&url).await.unwrap();
    let config =
        Config::from_toml_and_env("", std::path::Path::new("fuzz.toml"), Vec::new()).unwrap();
    (dir, schema(ApiState::new(store, &config)))
}

async fn one_case(schema: &AgentSchema, budget: &QueryBudget, seed: u64) -> Outcome {
    let text = document(seed);
    let verdict = budget
        .check_text(&text)
        .and_then(|()| match async_graphql::parser::parse_query(&text) {
            Ok(document) => budget.check_document(&document),
            Err(_) => Ok(()),
        });

    let response = tokio::time::timeout(SAFETY_BOUND, schema.execute(text.as_str()))
        .await
        .unwrap_or_else(|_| panic!("seed {seed}: /graphql gave no answer within the bound"));
    if let Err(refusal) = &verdict {
        assert_eq!(
            response.errors.first().map(|e| e.message.as_str()),
            Some(refusal.to_string().as_str()),
            "seed {seed}: the schema refuses what the budget refuses, in its words"
        );
    }

    let planned = plan(Dialect::Sqlite, &text, None, &Variables::default(), budget);
    match (&verdict, &planned) {
        (Err(refusal), Err(error)) => assert_eq!(
            error.message,
            refusal.subgraph_message(),
            "seed {seed}: the planner refuses in graph-node's words"
        ),
        (Err(refusal), Ok(_)) => panic!("seed {seed}: planned a document over budget: {refusal}"),
        (Ok(()), Ok(plan)) => assert!(
            produced(plan) <= budget.limits().max_expanded_selections,
            "seed {seed}: the plan outgrew the budget"
        ),
        (Ok(()), Err(_)) => {}
    }
    match verdict {
        Ok(()) if response.errors.is_empty() => Outcome::Answered,
        Ok(()) => Outcome::RefusedElsewhere,
        Err(_) => Outcome::OverBudget,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Outcome {
    /// Within budget and answered.
    Answered,
    /// Within budget, refused by validation or the planner (unknown fields and the like).
    RefusedElsewhere,
    /// Refused by the budget.
    OverBudget,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_documents_are_refused_or_answered_and_expansion_stays_in_budget() {
    let (_dir, schema) = serving_schema().await;
    let budget = QueryBudget::default();
    let seeds: Vec<u64> = match std::env::var("AGENTINDEX_FUZZ_SEED") {
        Ok(seed) => vec![seed.parse().expect("a seed is a number")],
        Err(_) => (0..CASES).collect(),
    };
    let mut outcomes = std::collections::HashMap::new();
    for seed in seeds.iter().copied() {
        *outcomes
            .entry(one_case(&schema, &budget, seed).await)
            .or_insert(0usize) += 1;
    }
    if seeds.len() == CASES as usize {
        // The generator reaches every outcome, so none of the assertions above is vacuous.
        for outcome in [
            Outcome::Answered,
            Outcome::RefusedElsewhere,
            Outcome::OverBudget,
        ] {
            assert!(
                outcomes.get(&outcome).copied().unwrap_or(0) >= 50,
                "{outcome:?} too rare: {outcomes:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_suggest_no_field_names_and_introspection_still_answers() {
    let (_dir, schema) = serving_schema().await;
    let response = schema.execute("{ agentz { id } }").await;
    let message = &response.errors[0].message;
    assert!(message.contains("agentz"), "{message}");
    assert!(!message.contains("Did you mean"), "{message}");
    let response = schema.execute("{ __schema { queryType { name } } }").await;
    assert!(response.errors.is_empty(), "{:?}", response.errors);
}
