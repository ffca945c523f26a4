//! Rows in PostgreSQL's binary `COPY` format: a header, each row as its field count and each
//! field as its length and its bytes in the column type's binary form, and a trailer. Binary
//! fields are not cast by the server as bound values are, so each value is checked against its
//! column's type here, and one that does not fit is refused by name before anything is sent.

use sqlx_core::any::AnyValueKind;

/// The header: the signature, no flags, no header extension.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";
/// The trailer: a field count of -1.
const TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// A column's type, as far as a bulk load writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ColumnType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Text,
    Bytea,
}

impl ColumnType {
    /// The type PostgreSQL names `name` (as sqlx reports it), if a bulk load can write it.
    pub(super) fn of(name: &str) -> Option<Self> {
        Some(match name {
            "BOOL" => Self::Bool,
            "INT2" => Self::Int2,
            "INT4" => Self::Int4,
            "INT8" => Self::Int8,
            "FLOAT4" => Self::Float4,
            "FLOAT8" => Self::Float8,
            "TEXT" | "VARCHAR" => Self::Text,
            "BYTEA" => Self::Bytea,
            _ => return None,
        })
    }
}

/// A column of a bulk load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Column {
    pub(super) name: String,
    pub(super) ty: ColumnType,
}

/// Why rows could not be written in the binary format.
#[derive(Debug, thiserror::Error)]
pub(super) enum EncodeError {
    /// The values do not divide into whole rows.
    #[error("{values} values are not whole rows of {columns} columns")]
    PartialRow { values: usize, columns: usize },
    /// A value does not fit its column's type.
    #[error("row {row}: column {column} ({ty:?}) cannot hold {value}")]
    Mismatch {
        row: usize,
        column: String,
        ty: ColumnType,
        value: String,
    },
}

/// Writes `values`, row after row in the order of `columns`, into `out` (emptied first) as one
/// binary `COPY` stream.
pub(super) fn rows(
    out: &mut Vec<u8>,
    columns: &[Column],
    values: &[AnyValueKind<'_>],
) -> Result<(), EncodeError> {
    out.clear();
    if columns.is_empty() || !values.len().is_multiple_of(columns.len()) {
        return Err(EncodeError::PartialRow {
            values: values.len(),
            columns: columns.len(),
        });
    }
    let width = i16::try_from(columns.len()).map_err(|_| EncodeError::PartialRow {
        values: values.len(),
        columns: columns.len(),
    })?;
    out.extend_from_slice(HEADER);
    for (row, fields) in values.chunks(columns.len()).enumerate() {
        out.extend_from_slice(&width.to_be_bytes());
        for (column, value) in columns.iter().zip(fields) {
            field(out, column.ty, value).ok_or_else(|| EncodeError::Mismatch {
                row,
                column: column.name.clone(),
                ty: column.ty,
                value: shown(value),
            })?;
        }
    }
    out.extend_from_slice(&TRAILER);
    Ok(())
}

/// `value` as an error shows it: its first characters, a blob of megabytes cut short.
fn shown(value: &AnyValueKind<'_>) -> String {
    const SHOWN: usize = 80;
    let full = format!("{value:?}");
    match full.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &full[..cut]),
        None => full,
    }
}

/// Appends one field (its length and its bytes; a length of -1 for NULL) if `value` fits `ty`:
/// a value of the column's own kind, or one an `INSERT` would convert on its own (PostgreSQL's
/// implicit and assignment casts: an integer into a narrower integer that holds it, into a
/// floating-point column or into text as its decimal digits, a boolean into text as `true` or
/// `false`, a double into a `real` it does not overflow). Anything else an `INSERT` refuses
/// too.
fn field(out: &mut Vec<u8>, ty: ColumnType, value: &AnyValueKind<'_>) -> Option<()> {
    use AnyValueKind as V;
    let integer = match value {
        V::SmallInt(n) => Some(i64::from(*n)),
        V::Integer(n) => Some(i64::from(*n)),
        V::BigInt(n) => Some(*n),
        _ => None,
    };
    match (ty, value) {
        (_, V::Null(_)) => {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            Some(())
        }
        (ColumnType::Bool, V::Bool(b)) => sized(out, &[u8::from(*b)]),
        (ColumnType::Int2, _) => sized(out, &i16::try_from(integer?).ok()?.to_be_bytes()),
        (ColumnType::Int4, _) => sized(out, &i32::try_from(integer?).ok()?.to_be_bytes()),
        (ColumnType::Int8, _) => sized(out, &integer?.to_be_bytes()),
        (ColumnType::Float4, V::Real(x)) => sized(out, &x.to_be_bytes()),
        (ColumnType::Float4, V::Double(x)) => sized(out, &narrow(*x)?.to_be_bytes()),
        // Rounded to the nearest, as PostgreSQL's own conversion rounds.
        (ColumnType::Float4, _) => sized(out, &(integer? as f32).to_be_bytes()),
        (ColumnType::Float8, V::Real(x)) => sized(out, &f64::from(*x).to_be_bytes()),
        (ColumnType::Float8, V::Double(x)) => sized(out, &x.to_be_bytes()),
        (ColumnType::Float8, _) => sized(out, &(integer? as f64).to_be_bytes()),
        (ColumnType::Text, V::Text(text)) => sized(out, text.as_bytes()),
        (ColumnType::Text, V::Bool(b)) => sized(out, if *b { b"true" } else { b"false" }),
        (ColumnType::Text, _) => sized(out, integer?.to_string().as_bytes()),
        (ColumnType::Bytea, V::Blob(bytes)) => sized(out, bytes),
        _ => None,
    }
}

/// `x` as a `real`, unless it overflows to infinity or underflows to zero (which PostgreSQL
/// refuses when it converts).
fn narrow(x: f64) -> Option<f32> {
    let narrowed = x as f32;
    let overflows = narrowed.is_infinite() && x.is_finite();
    let underflows = narrowed == 0.0 && x != 0.0;
    (!overflows && !underflows).then_some(narrowed)
}

/// Appends `bytes` after their length, if the length fits the format's (PostgreSQL's limit on
/// a value, 1 GiB, is lower still and refuses the rest).
fn sized(out: &mut Vec<u8>, bytes: &[u8]) -> Option<()> {
    let length = i32::try_from(bytes.len()).ok()?;
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(bytes);
    Some(())
}
