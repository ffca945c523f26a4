//! The statement form that asks [`super::DRIVER`] for a bulk load: `COPY table (columns) FROM
//! STDIN (FORMAT binary)`, its rows given as the statement's bound values, row after row in the
//! order of `columns`. PostgreSQL itself takes no bound values with a `COPY`, so the form cannot
//! be met by accident: without values it is a plain `COPY` and goes to the server unchanged.

/// The end of every bulk load's statement.
const SUFFIX: &str = ") FROM STDIN (FORMAT binary)";

/// The statement that loads rows of `columns` (a comma-separated list) into `table`.
pub(crate) fn copy_in(table: &str, columns: &str) -> String {
    format!("COPY {table} ({columns}{SUFFIX}")
}

/// The table and columns of a bulk load, read back from its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CopyTarget<'a> {
    pub(super) table: &'a str,
    /// The column list as written (commas, spaces and line breaks included).
    pub(super) columns: &'a str,
}

impl<'a> CopyTarget<'a> {
    /// The target of `statement` if it has the form [`copy_in`] writes.
    pub(super) fn of(statement: &'a str) -> Option<Self> {
        let inside = statement.strip_prefix("COPY ")?.strip_suffix(SUFFIX)?;
        let (table, columns) = inside.split_once(" (")?;
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
        (!table.is_empty() && table.chars().all(plain) && !columns.contains(['(', ')']))
            .then_some(Self { table, columns })
    }

    /// A statement that reads the target's columns, for their types.
    pub(super) fn select(&self) -> String {
        format!("SELECT {} FROM {} LIMIT 0", self.columns, self.table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statement_is_read_back_as_written() {
        let statement = copy_in("ledger", "chain_id, block_number,\n    data");
        assert_eq!(
            statement,
            "COPY ledger (chain_id, block_number,\n    data) FROM STDIN (FORMAT binary)"
        );
        let target = CopyTarget::of(&statement).unwrap();
        assert_eq!(target.table, "ledger");
        assert_eq!(target.columns, "chain_id, block_number,\n    data");
        assert_eq!(
            target.select(),
            "SELECT chain_id, block_number,\n    data FROM ledger LIMIT 0"
        );
    }

    #[test]
    fn other_statements_are_not_bulk_loads() {
        for statement in [
            "INSERT INTO ledger (chain_id) VALUES ($1)",
            "COPY ledger (chain_id) FROM STDIN",
            "COPY ledger (chain_id) FROM STDIN (FORMAT text)",
            "COPY ledger (chain_id) TO STDOUT (FORMAT binary)",
            "COPY (SELECT 1) (x) FROM STDIN (FORMAT binary)",
            "COPY led ger (chain_id) FROM STDIN (FORMAT binary)",
        ] {
            assert_eq!(CopyTarget::of(statement), None, "{statement}");
        }
    }
}
