//! Per-day counts of one agent's payments, for the explorer's chart: block timestamps bucketed
//! by UTC date, in Rust over the payments the agent's DataLoader already holds (no second
//! query, and the same on SQLite and PostgreSQL).

use super::facets::DailyPoint;

/// Seconds in a day.
const DAY_SECS: i64 = 86_400;

/// The UTC date of a unix time, `YYYY-MM-DD` (the proleptic Gregorian calendar, as SQL's date
/// functions give it, so these days line up with `dailySeries`).
pub(crate) fn utc_date(unix_secs: i64) -> String {
    // Days since 1970-01-01 turned into a civil date, counting in 400-year eras from 0000-03-01
    // so that leap days fall at the end of each year of the count.
    let days = unix_secs.div_euclid(DAY_SECS) + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The newest `days` days that have any of `timestamps`, oldest first, with how many fall on
/// each (the shape of `dailySeries`: days without data are left out).
pub(crate) fn daily_counts(
    timestamps: impl IntoIterator<Item = i64>,
    days: usize,
) -> Vec<DailyPoint> {
    let mut counts = std::collections::BTreeMap::<i64, u64>::new();
    for timestamp in timestamps {
        *counts.entry(timestamp.div_euclid(DAY_SECS)).or_default() += 1;
    }
    let skip = counts.len().saturating_sub(days);
    counts
        .into_iter()
        .skip(skip)
        .map(|(day, count)| DailyPoint {
            day: utc_date(day * DAY_SECS),
            value: count as f64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_the_calendar_across_leap_years_and_centuries() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(86_399), "1970-01-01");
        assert_eq!(utc_date(86_400), "1970-01-02");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(951_868_800), "2000-03-01");
        assert_eq!(utc_date(1_709_164_800), "2024-02-29");
        assert_eq!(utc_date(1_798_675_200), "2026-12-31");
        assert_eq!(utc_date(4_107_542_400), "2100-03-01");
        assert_eq!(utc_date(-1), "1969-12-31");
    }

    #[test]
    fn counts_keep_the_newest_days_oldest_first() {
        let day = |n: i64| n * DAY_SECS + 5;
        let points = daily_counts([day(3), day(1), day(3), day(2), day(3), day(1)], 2);
        let got: Vec<(String, f64)> = points.into_iter().map(|p| (p.day, p.value)).collect();
        assert_eq!(
            got,
            vec![
                ("1970-01-03".to_string(), 1.0),
                ("1970-01-04".to_string(), 3.0)
            ]
        );
    }
}
