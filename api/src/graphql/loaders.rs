//! DataLoaders: every relation an agent list needs is read once per request for all agents on
//! the page, never once per agent.

use crate::read::skills::{self, SkillRow};
use async_graphql::dataloader::Loader;
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::sync::Arc;

/// Skills by agent key.
pub(crate) struct SkillLoader(pub(crate) SqlitePool);

impl Loader<String> for SkillLoader {
    type Value = Vec<SkillRow>;
    type Error = Arc<sqlx::Error>;

    async fn load(&self, keys: &[String]) -> Result<HashMap<String, Self::Value>, Self::Error> {
        skills::of_agents(&self.0, keys).await.map_err(Arc::new)
    }
}
