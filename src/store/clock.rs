//! Time in a seen store: the [`Stamp`] each key carries (when the commit
//! that admitted it was made), and a run's [`Clock`] (its time, and how old
//! a key may be and still count as held).
//!
//! It knows seconds; not runs, files or keys.

use std::fmt;
use std::time::{Duration, SystemTime};

/// A length of time as every front end takes it (`--seen-max-age`,
/// Python's `max_age`, `?older-than=`): a number and a unit, or several
/// (`90s`, `1h30m`, `7d`, `2w`, `1day 12h`), humantime's grammar.
///
/// ```
/// use std::time::Duration;
/// use urinorm::store::parse_duration;
/// assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
/// assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86400)));
/// assert!(parse_duration("soon").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim()).map_err(|e| {
        format!(
            "'{}' is not a length of time ({e}): give a number and a unit, as 90s, 1h30m, 7d or 2w",
            crate::escape::escape_str(text)
        )
    })
}

/// When a key was admitted: the time of the commit that admitted it, in
/// whole seconds since the Unix epoch (1970-01-01T00:00:01Z to
/// 2106-02-07T06:28:15Z). The stamp 0 marks a key forgotten.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use urinorm::store::Stamp;
/// let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
/// assert_eq!(Stamp::of(t)?.time(), t);
/// assert!(Stamp::of(SystemTime::UNIX_EPOCH).is_err());
/// # Ok::<(), urinorm::store::ClockError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(pub(crate) u32);

/// A time a store cannot stamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockError {
    time: String,
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the time {} is outside what a seen store keeps (1970-01-01T00:00:01Z to 2106-02-07T06:28:15Z)",
            self.time
        )
    }
}

impl std::error::Error for ClockError {}

impl Stamp {
    /// The stamp of a key forgotten (a tombstone), which hides older ones.
    pub(crate) const FORGOTTEN: Stamp = Stamp(0);

    /// The stamp of `time`, in whole seconds (a fraction is dropped).
    pub fn of(time: SystemTime) -> Result<Stamp, ClockError> {
        let secs = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()
            .and_then(|d| u32::try_from(d.as_secs()).ok())
            .filter(|&s| s > 0);
        secs.map(Stamp).ok_or_else(|| ClockError {
            time: match time.duration_since(SystemTime::UNIX_EPOCH) {
                Ok(d) => format!("{} s after 1970-01-01T00:00:00Z", d.as_secs()),
                Err(_) => "before 1970".to_string(),
            },
        })
    }

    /// A stamp for a file's time, brought within range (for runs written
    /// before keys had stamps).
    pub(crate) fn of_file_time(time: SystemTime) -> Stamp {
        let secs = time
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(1, |d| d.as_secs());
        Stamp(secs.clamp(1, u64::from(u32::MAX)) as u32)
    }

    /// The time it stands for.
    pub fn time(self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(u64::from(self.0))
    }

    pub(crate) fn is_forgotten(self) -> bool {
        self == Stamp::FORGOTTEN
    }

    /// The stamp `age` before this one (never below the first second).
    pub fn minus(self, age: Duration) -> Stamp {
        let before = u64::from(self.0).saturating_sub(age.as_secs());
        Stamp(before.max(1) as u32)
    }
}

/// What a store's newest entry for a key says of it, by a [`Clock`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Holding {
    /// Never admitted, or forgotten.
    #[default]
    Absent,
    /// Admitted, recently enough.
    Held,
    /// Admitted longer ago than the maximum age: a key to admit again.
    Expired,
}

/// A run's time, for stamping what it commits and judging ages.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use urinorm::store::{Clock, Holding, Stamp};
/// let now = Stamp::of(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000))?;
/// let week = Clock::at(now).with_max_age(Duration::from_secs(7 * 86_400));
/// let ten_days_ago = Stamp::of(now.time() - Duration::from_secs(10 * 86_400))?;
/// assert_eq!(week.judge(ten_days_ago), Holding::Expired);
/// assert_eq!(Clock::at(now).judge(ten_days_ago), Holding::Held);
/// # Ok::<(), urinorm::store::ClockError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    now: Stamp,
    max_age: Option<Duration>,
}

impl Clock {
    /// The system's time now (brought within a stamp's range), no maximum
    /// age.
    pub fn system() -> Clock {
        Clock::at(Stamp::of_file_time(SystemTime::now()))
    }

    /// The time `now`, no maximum age.
    pub fn at(now: Stamp) -> Clock {
        Clock { now, max_age: None }
    }

    /// The same time, with keys older than `max_age` counted as not held.
    pub fn with_max_age(self, max_age: Duration) -> Clock {
        Clock {
            max_age: Some(max_age),
            ..self
        }
    }

    /// How old a key may be and still be held, if there is a limit.
    pub fn max_age(&self) -> Option<Duration> {
        self.max_age
    }

    /// Its time: the stamp its commits give.
    pub fn now(&self) -> Stamp {
        self.now
    }

    /// What a key whose newest entry has `stamp` is now.
    pub fn judge(&self, stamp: Stamp) -> Holding {
        if stamp.is_forgotten() {
            return Holding::Absent;
        }
        match self.max_age {
            Some(age) if stamp < self.now.minus(age) => Holding::Expired,
            _ => Holding::Held,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u32) -> Stamp {
        Stamp(secs)
    }

    #[test]
    fn a_key_exactly_as_old_as_the_maximum_is_still_held() {
        let clock = Clock::at(at(1_000_000)).with_max_age(Duration::from_secs(100));
        assert_eq!(clock.judge(at(999_900)), Holding::Held);
        assert_eq!(clock.judge(at(999_899)), Holding::Expired);
        assert_eq!(clock.judge(Stamp::FORGOTTEN), Holding::Absent);
        // Admitted "later" than now (a replay with an earlier --now): held.
        assert_eq!(clock.judge(at(2_000_000)), Holding::Held);
    }

    #[test]
    fn times_outside_the_range_are_refused_and_file_times_clamped() {
        let epoch = SystemTime::UNIX_EPOCH;
        assert!(Stamp::of(epoch + Duration::from_secs(1)).is_ok());
        let late = epoch + Duration::from_secs(u64::from(u32::MAX) + 1);
        let e = Stamp::of(late).unwrap_err().to_string();
        assert!(
            e.contains("4294967296 s after") && e.contains("outside"),
            "{e}"
        );
        assert_eq!(Stamp::of_file_time(late), Stamp(u32::MAX));
        assert_eq!(Stamp::of_file_time(epoch), Stamp(1));
        assert_eq!(at(50).minus(Duration::from_secs(100)), Stamp(1));
    }
}
