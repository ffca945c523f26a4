//! Rows of the Identity Registry's approvals, read alike by the agent refresh
//! (`store::agents::erc8004`: an agent's current operators) and by the reputation loader
//! (`store::reputation::load::erc8004`: its approval history), declared once for both.

use crate::schema::identity_approvals;
use crate::store::packed_row::packed_row;

packed_row! {
    /// A token's approved address set or cleared (`identity_approvals`).
    pub(crate) struct ApprovalRow {
        pub(crate) token_id: String = identity_approvals::token_id,
        pub(crate) operator: String = identity_approvals::operator,
        pub(crate) approved: i64 = identity_approvals::approved,
    }
}

packed_row! {
    /// An owner approving an operator for all its tokens, or revoking it (`identity_approvals`
    /// without a token).
    pub(crate) struct OperatorForAllRow {
        pub(crate) owner: String = identity_approvals::owner,
        pub(crate) operator: String = identity_approvals::operator,
        pub(crate) approved: i64 = identity_approvals::approved,
    }
}
