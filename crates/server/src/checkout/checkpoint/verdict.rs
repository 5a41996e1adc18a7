//! The named points of a checkout, and of its outbox's delivery, and what a checkpoint can
//! do there.

use std::{fmt, net::SocketAddr, str::FromStr, time::Duration};

use serde::{Deserialize, Serialize};

/// Where a checkpoint sits: in a checkout, in checkout order, then in the delivery of its
/// outbox message (the relay in `serve`, the consumer in `receipts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Point {
    /// The request arrived; nothing is read or claimed yet.
    Arrival,
    /// The claim and the order are committed; PayCo not yet called.
    AfterClaim,
    /// PayCo answered the charge (or did not); nothing of it is recorded here yet.
    AfterCharge,
    /// The fenced settlement (order paid, response saved) is about to be sent.
    BeforeCommit,
    /// The settlement committed; the answer is about to be sent.
    AfterCommit,
    /// The relay's delivery of an outbox message was acknowledged by the consumer; the
    /// message is not marked sent yet (`crash` there: the relay resends it after a restart).
    RelayAfterSend,
    /// The consumer's effect (the receipt) committed with the message id; the
    /// acknowledgement is not sent yet (`crash` or `drop` there: the relay resends).
    ConsumerAfterEffect,
}

impl Point {
    /// Every point, in checkout order.
    pub const ALL: [Point; 7] = [
        Point::Arrival,
        Point::AfterClaim,
        Point::AfterCharge,
        Point::BeforeCommit,
        Point::AfterCommit,
        Point::RelayAfterSend,
        Point::ConsumerAfterEffect,
    ];

    /// The kebab-case name used on the command line and in URLs.
    pub const fn name(self) -> &'static str {
        match self {
            Point::Arrival => "arrival",
            Point::AfterClaim => "after-claim",
            Point::AfterCharge => "after-charge",
            Point::BeforeCommit => "before-commit",
            Point::AfterCommit => "after-commit",
            Point::RelayAfterSend => "relay-after-send",
            Point::ConsumerAfterEffect => "consumer-after-effect",
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Point {
    type Err = CheckpointError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Point::ALL
            .into_iter()
            .find(|point| point.name() == s)
            .ok_or_else(|| CheckpointError::UnknownPoint(s.to_owned()))
    }
}

/// What a request does when it reaches a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Nothing: the request carries on.
    Continue,
    /// The request stops there forever, holding its claim (a worker that hangs, or a process
    /// about to be killed: tests send SIGKILL once they see the log line).
    Hang,
    /// The whole process aborts on the spot, as a crash would.
    Crash,
    /// The request fails with a panic; `panic = "unwind"` turns it into one 500, and a claim
    /// it holds is left in flight to go stale.
    Panic,
    /// The work stops there and the connection is closed without a byte of answer: after the
    /// charge, a worker that died (nothing committed, the claim in flight until it goes
    /// stale); after the commit, a lost response (the retry gets the replay).
    Drop,
    /// The request waits this long, then carries on: after the charge, a slow worker holding
    /// its claim; after the commit, an answer held back.
    Hold(Duration),
    /// The request is answered 503 with `Retry-After: 1` there; before the claim nothing is
    /// claimed, after it the claim is left in flight as a crash leaves it.
    Unavailable,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Continue => f.write_str("off"),
            Verdict::Hang => f.write_str("hang"),
            Verdict::Crash => f.write_str("crash"),
            Verdict::Panic => f.write_str("panic"),
            Verdict::Drop => f.write_str("drop"),
            Verdict::Hold(d) => write!(f, "hold:{}", d.as_millis()),
            Verdict::Unavailable => f.write_str("unavailable"),
        }
    }
}

/// The longest hold, in ms.
pub const MAX_HOLD_MS: u64 = 120_000;

impl FromStr for Verdict {
    type Err = CheckpointError;

    /// `off`, `hang`, `crash`, `panic`, `drop`, `unavailable`, or `hold:MS` (1..=120 000).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unknown = || CheckpointError::UnknownVerdict(s.to_owned());
        Ok(match s {
            "off" | "continue" => Verdict::Continue,
            "hang" => Verdict::Hang,
            "crash" => Verdict::Crash,
            "panic" => Verdict::Panic,
            "drop" => Verdict::Drop,
            "unavailable" => Verdict::Unavailable,
            other => {
                let ms: u64 = other
                    .strip_prefix("hold:")
                    .and_then(|ms| ms.parse().ok())
                    .ok_or_else(unknown)?;
                if !(1..=MAX_HOLD_MS).contains(&ms) {
                    return Err(unknown());
                }
                Verdict::Hold(Duration::from_millis(ms))
            }
        })
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A checkpoint setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// Not one of [`Point::ALL`].
    #[error(
        "unknown checkpoint {0:?} (known: arrival, after-claim, after-charge, before-commit, \
         after-commit, relay-after-send, consumer-after-effect)"
    )]
    UnknownPoint(String),
    /// Not a verdict.
    #[error(
        "unknown verdict {0:?} (known: off, hang, crash, panic, drop, unavailable, hold:MS with \
         MS 1..=120000)"
    )]
    UnknownVerdict(String),
    /// `POINT=VERDICT` was expected.
    #[error("checkpoint setting {0:?} is not POINT=VERDICT")]
    Malformed(String),
    /// Checkpoints were asked for on an address other machines can reach.
    #[error("failpoints and demo faults are only allowed on a loopback listen address, not {0}")]
    NotLoopback(SocketAddr),
    /// The server runs without `--failpoints`.
    #[error("failpoints are disabled (start the server with --failpoints)")]
    Disabled,
}

/// Parse `POINT=VERDICT` (`after-charge=hang`, `after-commit=hold:1500`).
pub fn parse_setting(s: &str) -> Result<(Point, Verdict), CheckpointError> {
    let (point, verdict) = s
        .split_once('=')
        .ok_or_else(|| CheckpointError::Malformed(s.to_owned()))?;
    Ok((point.parse()?, verdict.parse()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_refuse_nonsense() {
        assert_eq!(
            parse_setting("after-charge=hang"),
            Ok((Point::AfterCharge, Verdict::Hang))
        );
        assert_eq!(
            parse_setting("after-commit=hold:1500"),
            Ok((
                Point::AfterCommit,
                Verdict::Hold(Duration::from_millis(1500))
            ))
        );
        for verdict in [
            Verdict::Continue,
            Verdict::Hang,
            Verdict::Crash,
            Verdict::Panic,
            Verdict::Drop,
            Verdict::Unavailable,
            Verdict::Hold(Duration::from_millis(7)),
        ] {
            assert_eq!(verdict.to_string().parse(), Ok(verdict), "{verdict}");
        }
        assert!(matches!(
            parse_setting("after-charge"),
            Err(CheckpointError::Malformed(_))
        ));
        assert_eq!(
            parse_setting("relay-after-send=crash"),
            Ok((Point::RelayAfterSend, Verdict::Crash))
        );
        assert_eq!(
            parse_setting("consumer-after-effect=drop"),
            Ok((Point::ConsumerAfterEffect, Verdict::Drop))
        );
        assert!(matches!(
            parse_setting("later=hang"),
            Err(CheckpointError::UnknownPoint(_))
        ));
        for bad in [
            "explode",
            "hold:0",
            "hold:120001",
            "hold:",
            "hold:x",
            "hold:-1",
        ] {
            assert!(
                matches!(
                    parse_setting(&format!("after-claim={bad}")),
                    Err(CheckpointError::UnknownVerdict(_))
                ),
                "{bad}"
            );
        }
    }
}
