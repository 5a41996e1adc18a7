//! The lossy network between clients and the server. It does not carry anything: for each
//! message it returns a [`Verdict`] (turmoil-style), and the world schedules the deliveries.

use serde::{Deserialize, Serialize};

use crate::config::Faults;
use crate::rng::SimRng;

/// Which way a message travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client → server.
    Request,
    /// Server → client.
    Response,
}

/// What happens to one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Lost.
    Drop,
    /// Delivered once, after this many milliseconds.
    Deliver(u64),
    /// Delivered twice, after each of these delays.
    Duplicate(u64, u64),
}

/// Counts of what the network did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetStats {
    /// Requests lost.
    pub requests_dropped: u64,
    /// Responses lost.
    pub responses_dropped: u64,
    /// Requests delivered twice.
    pub duplicated: u64,
}

/// The network's state: its fault rates and the pending one-shot drops.
#[derive(Clone, Debug)]
pub struct Network {
    faults: Faults,
    drop_next_request: bool,
    drop_next_response: bool,
    stats: NetStats,
}

impl Network {
    /// A network with these fault rates.
    pub fn new(faults: Faults) -> Self {
        Self {
            faults,
            drop_next_request: false,
            drop_next_response: false,
            stats: NetStats::default(),
        }
    }

    /// The current fault rates.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// What the network has done so far.
    pub fn stats(&self) -> NetStats {
        self.stats
    }

    /// Replace the fault rates from now on.
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
    }

    /// One-shot: lose the next request, whatever the rates say.
    pub fn drop_next_request(&mut self) {
        self.drop_next_request = true;
    }

    /// One-shot: lose the next response, whatever the rates say.
    pub fn drop_next_response(&mut self) {
        self.drop_next_response = true;
    }

    /// True while a one-shot drop is armed.
    pub fn armed(&self) -> (bool, bool) {
        (self.drop_next_request, self.drop_next_response)
    }

    fn delay(&self, rng: &mut SimRng) -> u64 {
        self.faults.latency_ms + rng.upto(self.faults.jitter_ms)
    }

    /// Decide the fate of one message.
    pub fn route(&mut self, dir: Direction, rng: &mut SimRng) -> Verdict {
        match dir {
            Direction::Request => {
                if std::mem::take(&mut self.drop_next_request)
                    || rng.chance(self.faults.drop_request)
                {
                    self.stats.requests_dropped += 1;
                    return Verdict::Drop;
                }
                let first = self.delay(rng);
                if rng.chance(self.faults.duplicate) {
                    self.stats.duplicated += 1;
                    return Verdict::Duplicate(first, self.delay(rng));
                }
                Verdict::Deliver(first)
            }
            Direction::Response => {
                if std::mem::take(&mut self.drop_next_response)
                    || rng.chance(self.faults.drop_response)
                {
                    self.stats.responses_dropped += 1;
                    return Verdict::Drop;
                }
                Verdict::Deliver(self.delay(rng))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calm_network_delivers_within_latency_plus_jitter() {
        let mut net = Network::new(Faults::default());
        let mut rng = SimRng::new(1);
        for _ in 0..1000 {
            match net.route(Direction::Request, &mut rng) {
                Verdict::Deliver(d) => assert!((20..=30).contains(&d)),
                v => panic!("{v:?}"),
            }
        }
    }

    #[test]
    fn one_shots_fire_once() {
        let mut net = Network::new(Faults::default());
        let mut rng = SimRng::new(1);
        net.drop_next_response();
        assert!(matches!(
            net.route(Direction::Request, &mut rng),
            Verdict::Deliver(_)
        ));
        assert_eq!(net.route(Direction::Response, &mut rng), Verdict::Drop);
        assert!(matches!(
            net.route(Direction::Response, &mut rng),
            Verdict::Deliver(_)
        ));
        assert_eq!(net.stats().responses_dropped, 1);
    }

    #[test]
    fn rates_drop_and_duplicate() {
        let faults = Faults {
            drop_request: 0.5,
            duplicate: 1.0,
            ..Faults::default()
        };
        let mut net = Network::new(faults);
        let mut rng = SimRng::new(2);
        let mut drops = 0;
        for _ in 0..1000 {
            match net.route(Direction::Request, &mut rng) {
                Verdict::Drop => drops += 1,
                Verdict::Duplicate(..) => {}
                v => panic!("{v:?}"),
            }
        }
        assert!((400..600).contains(&drops));
        assert_eq!(net.stats().duplicated, 1000 - drops);
    }
}
