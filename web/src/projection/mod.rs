//! The world projected into what the panels show: one file per panel. [`Projector::view`]
//! builds each [`View`] from the world and the previous view (unchanged rows keep their `Rc`);
//! the timeline's lanes are read on demand by its panel ([`timeline`]).
//!
//! It reads the world and the page's journal; it never changes either, and it knows nothing of
//! the session that drives them (`session/` hands it what it needs).

pub mod claims;
pub mod feed;
pub mod ledger;
pub mod sequence;
pub mod storage;
pub mod timeline;

use std::rc::Rc;

use idem_sim::{CheckoutId, CheckoutOutcome, Properties, World};

use crate::journal::PageJournal;
use crate::model::scenario::{Live, ScenarioStatus};
use crate::model::view::{EventRow, Stats, View};

/// The checkout the cart panel shows: Pay's last one, or the scenario's (its first), with its
/// state: the cart whose total PayCo charges.
fn shown_checkout(
    world: &World,
    current: Option<CheckoutId>,
    scenario: bool,
) -> Option<(CheckoutId, &'static str)> {
    let c = current.or(scenario.then_some(CheckoutId(0)))?;
    let state = match world.checkout(c)?.outcome {
        CheckoutOutcome::Pending => "pending",
        CheckoutOutcome::Paid { .. } => "paid",
        CheckoutOutcome::Rejected { .. } => "refused",
        CheckoutOutcome::Unknown => "unknown",
    };
    Some((c, state))
}

/// What the page knows beside the world.
pub struct PageState<'a> {
    /// The page's journal (localStorage).
    pub journal: &'a PageJournal,
    /// The checkout the Pay button started last.
    pub current: Option<CheckoutId>,
    /// What the page itself did since the last view, for the feed.
    pub notes: Vec<EventRow>,
    /// The classroom scenario the world runs, if any.
    pub scenario: Option<ScenarioStatus>,
    /// Bumped whenever the run log gains an input.
    pub log_rev: u32,
}

/// Each panel's projection, with what it keeps between views.
#[derive(Default)]
pub struct Projector {
    claims: claims::Claims,
    ledger: ledger::Ledger,
    feed: feed::Feed,
    storage: storage::Storage,
    properties: Rc<Properties>,
}

impl Projector {
    /// What the panels show now.
    pub fn view(&mut self, world: &World, page: PageState<'_>) -> View {
        let counters = world.counters();
        let pending = world
            .checkouts()
            .iter()
            .filter(|r| r.outcome == CheckoutOutcome::Pending)
            .count();
        let stats = Stats {
            checkouts: counters.checkouts as u32,
            pending: pending as u32,
            attempts: counters.attempts as u32,
            conflicts: counters.conflicts as u32,
            mismatches: counters.mismatches as u32,
            takeovers: counters.takeovers as u32,
            fenced: counters.fenced as u32,
            unknown: counters.unknown as u32,
            charges: world.charges() as u32,
            double_charged: world.double_charged() as u32,
            receipts: Some(counters.receipts as u32),
        };
        let events = self.feed.update(world, page.notes);
        let paying = page.current.is_some_and(|c| {
            world
                .checkout(c)
                .is_some_and(|r| r.outcome == CheckoutOutcome::Pending)
        });
        let cart = shown_checkout(world, page.current, page.scenario.is_some());
        let properties = world.properties();
        if *self.properties != properties {
            self.properties = Rc::new(properties);
        }
        View {
            now: world.now(),
            seed: world.config().seed,
            claims: self.claims.rows(world),
            ledger: self.ledger.rows(world),
            events,
            // The record of the checkout the cart shows: Pay's, or the scenario's.
            storage: self.storage.record(page.journal, cart.map(|c| c.0)),
            stats,
            cart,
            paying,
            log_rev: page.log_rev,
            live: Live {
                scenario: page.scenario,
                properties: self.properties.clone(),
            },
            real: None,
        }
    }
}
