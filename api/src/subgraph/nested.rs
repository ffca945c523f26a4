//! What was read for the referenced and derived fields of a selection, for `execute` to copy
//! into each row's object: the objects found, already written as JSON, and which are each
//! row's.

use std::collections::HashMap;
use std::ops::Range;

/// The objects read for a nested field: written one after another into `text`, and where each
/// is, by the key of the row they belong to (a referenced row's keys, a parent's links), as
/// JSON text.
#[derive(Default)]
pub(crate) struct Found {
    pub(crate) text: Vec<u8>,
    pub(crate) by_key: HashMap<String, Vec<Range<usize>>>,
}

impl Found {
    /// The objects under `key`, none when there are none.
    fn under(&self, key: &str) -> impl Iterator<Item = &[u8]> {
        self.by_key
            .get(key)
            .into_iter()
            .flatten()
            .map(|range| &self.text[range.clone()])
    }
}

/// What was read for one item of a selection, a referenced or derived field: the objects of
/// each row.
pub(crate) enum Nested {
    /// Objects filed by key, and each row's key among them (none for a row whose reference is
    /// null).
    Keyed {
        found: Found,
        row_keys: Vec<Option<String>>,
    },
    /// Each row's own object, if it has one, and where it is in `text` (a reference read in
    /// its parent's row).
    Own {
        text: Vec<u8>,
        of_row: Vec<Option<Range<usize>>>,
    },
}

impl Nested {
    /// The first object of the row at `place`.
    pub(crate) fn first_of(&self, place: usize) -> Option<&[u8]> {
        match self {
            Nested::Keyed { .. } => self.all_of(place).next(),
            Nested::Own { text, of_row } => of_row[place].clone().map(|at| &text[at]),
        }
    }

    /// Every object of the row at `place` filed by key, in the order they were read (a
    /// derived list's page).
    pub(crate) fn all_of(&self, place: usize) -> impl Iterator<Item = &[u8]> {
        let filed = match self {
            Nested::Keyed { found, row_keys } => {
                row_keys[place].as_deref().map(|key| found.under(key))
            }
            Nested::Own { .. } => None,
        };
        filed.into_iter().flatten()
    }
}
