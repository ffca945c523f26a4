//! Undoing blocks: every fact above the common ancestor goes, and every agent those facts
//! touched is recomputed from what remains, their reputation too. This is the only place a reorg
//! changes the database: it runs every stage's rewind (`stages/`).

use super::StoreResult;
use super::batch::ChainContext;
use super::stages::{RewindContext, STAGES};
use sqlx::AnyConnection;

/// Undoes every block of `chain` above `ancestor`: first every stage notes what the rows above
/// it touch, while they are all there; then, in stage order, the facts go, each derived stage
/// rebuilds from what remains and the cursor moves back. Returns the fact rows removed.
pub(super) async fn rewind(
    conn: &mut AnyConnection,
    chain: &ChainContext,
    ancestor: u64,
) -> StoreResult<u64> {
    let mut undo = RewindContext::new(chain, ancestor)?;
    for stage in STAGES {
        stage.before_rewind(conn, &mut undo).await?;
    }
    for stage in STAGES {
        stage.rewind(conn, &mut undo).await?;
    }
    Ok(undo.removed)
}
