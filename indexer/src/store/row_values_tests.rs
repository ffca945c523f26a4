//! Rows decoded as packed rows are: by position, nested where the shape says.

use super::{Shape, from_row, row_of};
use sqlx_core::any::{AnyTypeInfoKind, AnyValueKind};
use std::borrow::Cow;

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Feedback {
    token_id: String,
    index: Option<i64>,
    value: u64,
    weight: f64,
    revoked: bool,
}

fn text(s: &str) -> AnyValueKind<'static> {
    AnyValueKind::Text(Cow::Owned(s.to_string()))
}

#[test]
fn a_flat_row_fills_the_struct_field_by_field() {
    let row = row_of(vec![
        text("7"),
        AnyValueKind::Null(AnyTypeInfoKind::BigInt),
        AnyValueKind::Integer(42),
        AnyValueKind::BigInt(3),
        AnyValueKind::Bool(true),
    ]);
    let decoded: Feedback = from_row(row, Shape::Flat).unwrap();
    assert_eq!(
        decoded,
        Feedback {
            token_id: "7".into(),
            index: None,
            value: 42,
            weight: 3.0,
            revoked: true,
        }
    );
}

#[test]
fn leading_values_come_first_and_the_rest_is_the_nested_struct() {
    let row = row_of(vec![
        AnyValueKind::BigInt(12),
        AnyValueKind::BigInt(4),
        text("9"),
        AnyValueKind::BigInt(2),
        AnyValueKind::SmallInt(1),
        AnyValueKind::Double(0.5),
        AnyValueKind::Bool(false),
    ]);
    let (block, log, feedback): (i64, i64, Feedback) = from_row(row, Shape::Leading(2)).unwrap();
    assert_eq!((block, log), (12, 4));
    assert_eq!(feedback.index, Some(2));
    assert_eq!(feedback.value, 1);
    assert_eq!(feedback.weight, 0.5);
}

#[test]
fn a_row_that_does_not_fit_its_struct_is_refused() {
    let short = row_of(vec![text("7"), AnyValueKind::BigInt(1)]);
    assert!(from_row::<Feedback>(short, Shape::Flat).is_err());

    let long = row_of(vec![
        text("7"),
        AnyValueKind::BigInt(1),
        AnyValueKind::BigInt(42),
        AnyValueKind::Double(1.0),
        AnyValueKind::Bool(true),
        text("one too many"),
    ]);
    let error = from_row::<Feedback>(long, Shape::Flat).unwrap_err();
    assert!(error.to_string().contains("1 more value"), "{error}");

    let nested_short = row_of(vec![
        AnyValueKind::BigInt(12),
        AnyValueKind::BigInt(4),
        text("9"),
    ]);
    assert!(from_row::<(i64, i64, Feedback)>(nested_short, Shape::Leading(2)).is_err());
    let positions_only = row_of(vec![AnyValueKind::BigInt(12), AnyValueKind::BigInt(4)]);
    assert!(from_row::<(i64, i64, Feedback)>(positions_only, Shape::Leading(2)).is_err());

    let negative = row_of(vec![
        text("7"),
        AnyValueKind::BigInt(1),
        AnyValueKind::BigInt(-1),
        AnyValueKind::Double(1.0),
        AnyValueKind::Bool(true),
    ]);
    let error = from_row::<Feedback>(negative, Shape::Flat).unwrap_err();
    assert!(error.to_string().contains("column 2 (`c2`)"), "{error}");

    let wrong_type = row_of(vec![
        AnyValueKind::BigInt(7),
        AnyValueKind::BigInt(1),
        AnyValueKind::BigInt(42),
        AnyValueKind::Double(1.0),
        AnyValueKind::Bool(true),
    ]);
    let error = from_row::<Feedback>(wrong_type, Shape::Flat).unwrap_err();
    assert!(error.to_string().contains("column 0 (`c0`)"), "{error}");

    // A NULL where the struct has no `Option`, in the nested struct: named by its place in
    // the whole row.
    let null = row_of(vec![
        AnyValueKind::BigInt(12),
        AnyValueKind::BigInt(4),
        text("9"),
        AnyValueKind::BigInt(2),
        AnyValueKind::Null(AnyTypeInfoKind::BigInt),
        AnyValueKind::Double(0.5),
        AnyValueKind::Bool(false),
    ]);
    let error = from_row::<(i64, i64, Feedback)>(null, Shape::Leading(2)).unwrap_err();
    assert!(error.to_string().contains("column 4 (`c4`)"), "{error}");
}
