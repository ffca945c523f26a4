//! Per-day series: the point each day of a series is answered as, the most entries a facet or
//! series returns, and UTC dates of unix times. One agent's payments are counted per day in
//! SQL (`read::counts::daily_payments`, days since 1970-01-01) and named here, the same on
//! SQLite and PostgreSQL; the dashboard's daily series come dated from SQL.

use async_graphql::SimpleObject;

/// Most entries a facet or series returns.
pub(crate) const MAX_ENTRIES: i32 = 500;

/// One day of a series.
#[derive(SimpleObject)]
pub(crate) struct DailyPoint {
    /// UTC date of the blocks, YYYY-MM-DD.
    pub(crate) day: String,
    /// The day's count or volume.
    pub(crate) value: f64,
}

/// Seconds in a day.
pub(crate) const DAY_SECS: i64 = 86_400;

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
}
