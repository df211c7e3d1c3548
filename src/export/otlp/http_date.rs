//! HTTP dates (RFC 9110 §5.6.7), for `Retry-After`: the IMF-fixdate every
//! server should send, and the two obsolete forms a recipient must accept
//! too (the OpenTelemetry JS exporter reads all three through `Date`).

/// HTTP dates have four-digit years; a larger one is not a date (and
/// would overflow the arithmetic).
const MAX_YEAR: u64 = 9999;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// An HTTP date to Unix seconds. `now` (Unix seconds) places an RFC 850
/// date's two-digit year: more than 50 years ahead means a century back.
pub fn parse_http_date(s: &str, now: u64) -> Option<u64> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    match parts.as_slice() {
        // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        [_, day, month, year, time, "GMT"] => {
            unix_seconds(year.parse().ok()?, month, day.parse().ok()?, time)
        }
        // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
        [_, date, time, "GMT"] => {
            let mut fields = date.split('-');
            let (day, month, year) = (fields.next()?, fields.next()?, fields.next()?);
            if fields.next().is_some() || year.len() != 2 {
                return None;
            }
            let mut year = 2000 + year.parse::<u64>().ok()?;
            if year > year_of(now) + 50 {
                year -= 100;
            }
            unix_seconds(year, month, day.parse().ok()?, time)
        }
        // asctime: Sun Nov  6 08:49:37 1994
        [_, month, day, time, year] => {
            unix_seconds(year.parse().ok()?, month, day.parse().ok()?, time)
        }
        _ => None,
    }
}

/// The (proleptic Gregorian) year of Unix second `at`.
fn year_of(at: u64) -> u64 {
    let starts = |year: u64| unix_seconds(year, "Jan", 1, "00:00:00");
    let mut year = (1970 + at / 31_556_952).min(MAX_YEAR);
    // The estimate may be a year off either way at a year's edge.
    while year > 1970 && starts(year).is_some_and(|start| start > at) {
        year -= 1;
    }
    while year < MAX_YEAR && starts(year + 1).is_some_and(|start| start <= at) {
        year += 1;
    }
    year
}

/// A civil date and `hh:mm:ss` time (UTC) to Unix seconds.
fn unix_seconds(year: u64, month: &str, day: u64, time: &str) -> Option<u64> {
    let month = MONTHS.iter().position(|m| *m == month)? as u64 + 1;
    let hms: Vec<u64> = (time.split(':'))
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    if hms.len() != 3
        || !(1..=31).contains(&day)
        || !(1970..=MAX_YEAR).contains(&year)
        || hms[0] > 23
        || hms[1] > 59
        || hms[2] > 60
    {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm), for years >= 1970.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_796_256_000; // 2026-12-03T00:00:00Z

    #[test]
    fn the_three_forms() {
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT", NOW),
            Some(0)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT", NOW),
            Some(951_825_600)
        );
        let fixdate = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", NOW);
        assert_eq!(fixdate, Some(784_111_777));
        assert_eq!(
            parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", NOW),
            fixdate
        );
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994", NOW), fixdate);
    }

    #[test]
    fn two_digit_years_are_at_most_50_years_ahead() {
        let in_2030 = parse_http_date("Monday, 02-Dec-30 00:00:00 GMT", NOW).map(year_of);
        assert_eq!(in_2030, Some(2030));
        let in_1980 = parse_http_date("Tuesday, 02-Dec-80 00:00:00 GMT", NOW).map(year_of);
        assert_eq!(in_1980, Some(1980));
    }

    #[test]
    fn years_at_their_edges() {
        for year in [1970, 1999, 2000, 2027, 2028, 2100] {
            let start = unix_seconds(year, "Jan", 1, "00:00:00").expect("a date");
            assert_eq!(year_of(start), year);
            if year > 1970 {
                assert_eq!(year_of(start - 1), year - 1);
            }
            assert_eq!(year_of(start + 5_400), year);
        }
    }

    #[test]
    fn anything_else_is_not_a_date() {
        for bad in [
            "soon",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov  6 08:49 1994",
            "Sun Foo  6 08:49:37 1994",
            "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 18446744073709551615 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad, NOW), None, "{bad}");
        }
    }
}
