//! The rules: the decision table and the fenced writes, on top of a [`Table`].

use crate::{
    event::{EventLog, Rejection},
    first_sent::FirstSent,
    key::ScopeCache,
    rules::{self, Finish, Step, Write},
    Event, EventKind, Fenced, Fingerprint, IdRef, Lease, MemoryTable, RecordId, RouteConfig,
    RowView, SavedResponse, Status, StoreConfig, Table,
};

use crate::begin::Begin;

/// The claim table and its rules. See the crate docs for the decision table and the
/// call order.
///
/// Methods by direction: getters ([`config`](Self::config), [`table`](Self::table),
/// [`rows`](Self::rows), [`events`](Self::events), [`events_since`](Self::events_since)),
/// the input [`begin`](Self::begin), the fenced writes ([`commit`](Self::commit),
/// [`save`](Self::save), [`fail`](Self::fail), [`release`](Self::release)), housekeeping
/// ([`prune`](Self::prune), [`set_config`](Self::set_config)) and the output [`drain_events`](Self::drain_events).
#[derive(Debug, Clone)]
pub struct Store<T: Table = MemoryTable> {
    config: StoreConfig,
    table: T,
    log: EventLog,
    scopes: ScopeCache,
}

impl Store<MemoryTable> {
    /// A store over an empty [`MemoryTable`].
    pub fn new(config: StoreConfig) -> Self {
        Self::with_table(config, MemoryTable::new())
    }
}

impl Default for Store<MemoryTable> {
    fn default() -> Self {
        Self::new(StoreConfig::default())
    }
}

impl<T: Table> Store<T> {
    /// A store over `table`.
    pub fn with_table(config: StoreConfig, table: T) -> Self {
        Self {
            log: EventLog::new(config.event_capacity),
            config,
            table,
            scopes: ScopeCache::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Change the configuration of a running store. The table, the fencing tokens and the
    /// event log (its events and its sequence numbers) carry on; the new `lock_ms` applies
    /// to every later decision, including those about rows written before (a lease's
    /// liveness is computed when asked). The new `retention_ms` applies to rows claimed from
    /// now on: a row keeps the retention it was claimed with (its stored `expires_at` and
    /// `retention_ms`). A smaller `event_capacity` drops the oldest events; 0 turns the log off.
    pub fn set_config(&mut self, config: StoreConfig) {
        self.log.set_capacity(config.event_capacity);
        self.config = config;
    }

    /// The table, read-only.
    pub fn table(&self) -> &T {
        &self.table
    }

    /// The table, writable. Writes through it bypass the rules and the event log: meant
    /// for tooling and for reproducing classic bugs in the simulator.
    pub fn table_mut(&mut self) -> &mut T {
        &mut self.table
    }

    /// Decide what to do with a request: validate the scope, the key and the body,
    /// fingerprint the route's operation and the body, then apply the decision table
    /// ([`rules::decide`]). Checks run in this order: scope valid, key present (where
    /// required), key valid, body size, body JSON. An unkeyed request on an optional-key
    /// route is only checked for scope and size.
    pub fn begin(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        match rules::check_request(scope, key, body, route, &self.config) {
            Ok(Some((key, fp))) => self.decide(now, IdRef { scope, key }, fp, route, None),
            Ok(None) => Begin::Unkeyed,
            Err(refusal) => self.refuse(now, refusal),
        }
    }

    /// [`begin`](Self::begin) with a fingerprint the caller computed (over the route's
    /// operation and the request's parameters, with [`fingerprint`](crate::fingerprint)
    /// or [`Fingerprint::of_canonical`], or once for many requests). Skips the body checks.
    pub fn begin_with_fingerprint(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        fingerprint: Fingerprint,
        route: &RouteConfig,
    ) -> Begin {
        self.begin_first_sent(now, scope, key, None, fingerprint, route)
    }

    /// [`begin_with_fingerprint`](Self::begin_with_fingerprint) for a request that says when
    /// it was first sent (`first_sent`: its `Repeatability-First-Sent`, read by
    /// [`first_sent::parse`](crate::first_sent::parse)), so the expired-key guard applies
    /// ([`crate::first_sent`]): a key with no row, first sent longer ago than the route's
    /// retention plus [`StoreConfig::first_sent_tolerance_ms`], is [`Begin::KeyExpired`].
    pub fn begin_first_sent(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        first_sent: Option<u64>,
        fingerprint: Fingerprint,
        route: &RouteConfig,
    ) -> Begin {
        match rules::check_id(scope, key, route) {
            Ok(Some(key)) => {
                let sent = rules::first_sent(first_sent, route, &self.config);
                self.decide(now, IdRef { scope, key }, fingerprint, route, sent)
            }
            Ok(None) => Begin::Unkeyed,
            Err(refusal) => self.refuse(now, refusal),
        }
    }

    /// The one-step write: if `lease` still holds the claim, run `work` (the business
    /// change) and save the response it returns as one atomic step, and return `work`'s
    /// output. If the lease was lost, `work` does not run: `Err(Fenced)`.
    ///
    /// No crash can fall between the business change and the saved response, because
    /// they are one step (see [`Table::commit_if_held`]). The row's retention restarts at
    /// `now`.
    pub fn commit<R>(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        work: impl FnOnce() -> (R, SavedResponse),
    ) -> Result<R, Fenced> {
        let mut status = 0;
        let out = self.table.commit_if_held(id.as_ref(), lease, now, || {
            let (out, response) = work();
            status = response.status;
            (out, response)
        });
        match out {
            Some(out) => {
                self.log_id(
                    now,
                    id,
                    EventKind::Saved {
                        token: lease.token,
                        status,
                    },
                );
                Ok(out)
            }
            None => Err(self.fenced(now, id, lease)),
        }
    }

    /// The two-step write, for callers that did the work themselves: save `response` if
    /// `lease` still holds the claim. A crash between the work and this call leaves the
    /// claim to go stale and be taken over, so the work may run twice; prefer
    /// [`commit`](Self::commit). The row's retention restarts at `now`.
    pub fn save(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        let status = response.status;
        let done = Status::Done { response };
        if self.table.compare_and_set(id.as_ref(), lease, done, now) {
            self.log_id(
                now,
                id,
                EventKind::Saved {
                    token: lease.token,
                    status,
                },
            );
            Ok(())
        } else {
            Err(self.fenced(now, id, lease))
        }
    }

    /// The work failed: follow the policy the claiming route declared
    /// ([`RouteConfig::on_error`], kept in the row as [`Record::on_error`](crate::Record::on_error)).
    /// [`ErrorPolicy::ReleaseClaim`](crate::ErrorPolicy::ReleaseClaim) releases the claim and drops `response` (send it to
    /// the client yourself); [`ErrorPolicy::SaveResponse`](crate::ErrorPolicy::SaveResponse) saves it for replay. Fenced
    /// like [`save`](Self::save) and [`release`](Self::release): a lost lease writes
    /// nothing and returns `Err(Fenced)`.
    pub fn fail(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        let held = self.table.get(id.as_ref()).filter(|r| r.is_held_by(lease));
        let Some(policy) = held.map(|r| r.on_error) else {
            return Err(self.fenced(now, id, lease));
        };
        match rules::finish(policy, response) {
            Finish::Release => self.release(now, id, lease),
            Finish::Commit(response) => self.save(now, id, lease, response),
        }
    }

    /// Release the claim if `lease` still holds it: the record stays, released, bound to
    /// its fingerprint until retention ends, so the same request's retry claims it again and
    /// runs the work again (from the recovery point the caller left), and another request
    /// under the key is 422. The release is final for `lease`: it fences nothing any more.
    /// A zombie's release leaves the record alone and returns `Err(Fenced)`.
    pub fn release(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<(), Fenced> {
        if self.table.release_if_held(id.as_ref(), lease) {
            self.log_id(now, id, EventKind::Released { token: lease.token });
            Ok(())
        } else {
            Err(self.fenced(now, id, lease))
        }
    }

    /// Renew `lease` at `now` if it still holds the claim: the heartbeat of work that may run
    /// longer than `lock_ms`, so an honest worker is never taken over. Returns the renewed
    /// lease ([`Lease::renewed`]: the same token), which the holder's later writes use. A
    /// lease that was taken over (or released, or saved) renews nothing: `Err(Fenced)`, and
    /// the worker must stop before its next write. The row's retention restarts at `now`.
    pub fn renew(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<Lease, Fenced> {
        let renewed = lease.renewed(now);
        let in_flight = Status::InFlight { lease: renewed };
        if self
            .table
            .compare_and_set(id.as_ref(), lease, in_flight, now)
        {
            Ok(renewed)
        } else {
            Err(self.fenced(now, id, lease))
        }
    }

    /// Delete every record past retention at `now`; how many. A live in-flight claim is
    /// never pruned, whatever its `expires_at`.
    pub fn prune(&mut self, now: u64) -> usize {
        let gone = self.table.delete_expired(now, self.config.lock_ms);
        if self.log.is_on() {
            for id in &gone {
                self.log_id(now, id, EventKind::Pruned);
            }
        }
        gone.len()
    }

    /// A snapshot of every row at `now`, in (scope, key) order.
    pub fn rows(&self, now: u64) -> Vec<RowView> {
        let mut rows = Vec::with_capacity(self.table.len());
        let lock_ms = self.config.lock_ms;
        self.table
            .for_each(&mut |id, r| rows.push(RowView::new(id, r, now, lock_ms)));
        rows
    }

    /// The events the log still holds, oldest first.
    pub fn events(&self) -> impl DoubleEndedIterator<Item = &Event> + '_ {
        self.log.iter()
    }

    /// The held events with [`Event::seq`] at least `seq`: a UI keeps
    /// [`next_event_seq`](Self::next_event_seq) as its cursor.
    pub fn events_since(&self, seq: u64) -> impl Iterator<Item = &Event> + '_ {
        self.log.since(seq)
    }

    /// The seq the next event will get.
    pub fn next_event_seq(&self) -> u64 {
        self.log.next_seq()
    }

    /// Remove and return every held event, oldest first.
    pub fn drain_events(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.log.drain()
    }

    /// Append a [`EventKind::Note`] (for decisions made outside the store, such as a
    /// simulated bug writing through [`table_mut`](Self::table_mut)).
    /// An invalid `key` is logged as no key.
    pub fn push_event(&mut self, now: u64, scope: &str, key: Option<&str>, text: String) {
        self.log
            .push_unchecked_key(now, scope, key, EventKind::Note { text });
    }

    /// Apply the decision table ([`rules::decide`]) to a validated request, performing the
    /// conditional write it asks for.
    fn decide(
        &mut self,
        now: u64,
        id: IdRef<'_>,
        fp: Fingerprint,
        route: &RouteConfig,
        first_sent: Option<FirstSent>,
    ) -> Begin {
        let lock_ms = self.config.lock_ms;
        // One pass decides, unless the row changed between our read and our conditional
        // write, which only a table shared with other stores allows; then read again.
        let mut deciding = rules::Deciding::new(fp, lock_ms).with_first_sent(first_sent);
        loop {
            if let Err(rules::Contended { retry_after_ms }) = deciding.read() {
                let reason = Rejection::InFlight { retry_after_ms };
                self.reject(now, id.scope, Some(id.key), 409, reason);
                return Begin::InFlight { retry_after_ms };
            }
            let (stored, row) = match self.table.get_with_id(id) {
                Some((stored, row)) => (stored, Some(row)),
                None => (None, None),
            };
            // The row's own id, shared with the events and handed out (no key copy).
            let stored = stored.filter(|_| self.log.is_on()).cloned();
            let step = deciding.decide(row.as_deref(), now);
            // An answer is logged and returned; a write is performed below, outside the
            // read's borrow of the table.
            let write = match step {
                Step::Answer(answer) => {
                    let (kind, begin) = answer.decided();
                    self.log_seen(now, id, stored, kind);
                    return begin;
                }
                Step::Write(write) => write,
            };
            drop(row);
            match write {
                Write::Claim => {
                    let lease = self.new_lease(now);
                    let record = rules::claim_record(now, fp, route, lease, &self.config);
                    let owned = self.owned(id);
                    if self.table.insert_if_absent(&owned, record) {
                        self.log_id(now, &owned, EventKind::Claimed { token: lease.token });
                        return Begin::Execute {
                            id: owned,
                            lease,
                            taken_over: false,
                        };
                    }
                }
                Write::ClearExpired => {
                    if self.table.delete_if_expired(id, now, lock_ms) {
                        self.log_seen(now, id, stored, EventKind::Pruned);
                    }
                }
                Write::Reclaim { released } => {
                    let lease = self.new_lease(now);
                    if self.table.reclaim_if_released(id, &released, lease, now) {
                        let owned = stored.unwrap_or_else(|| self.owned(id));
                        self.log_id(now, &owned, EventKind::Claimed { token: lease.token });
                        return Begin::Execute {
                            id: owned,
                            lease,
                            taken_over: false,
                        };
                    }
                }
                Write::TakeOver { seen } => {
                    let lease = self.new_lease(now);
                    let status = Status::InFlight { lease };
                    if self.table.compare_and_set(id, &seen, status, now) {
                        let kind = EventKind::TakenOver {
                            old_token: seen.token,
                            new_token: lease.token,
                        };
                        let owned = stored.unwrap_or_else(|| self.owned(id));
                        self.log_id(now, &owned, kind);
                        return Begin::Execute {
                            id: owned,
                            lease,
                            taken_over: true,
                        };
                    }
                }
            }
        }
    }

    /// An owned id for a validated `id`, sharing the scope with earlier ones.
    fn owned(&mut self, id: IdRef<'_>) -> RecordId {
        RecordId::from_shared(self.scopes.get(id.scope), id.key)
    }

    /// Log a decision about a row [`look`](Self::look) saw, sharing its id if it has one.
    fn log_seen(&mut self, now: u64, id: IdRef<'_>, stored: Option<RecordId>, kind: EventKind) {
        match stored {
            Some(stored) => self.log.push_owned(now, stored, kind),
            None => self.log_ref(now, id, kind),
        }
    }

    fn new_lease(&mut self, now: u64) -> Lease {
        Lease {
            locked_at: now,
            token: self.table.next_token(),
        }
    }

    fn refuse(&mut self, now: u64, refusal: rules::Refusal<'_>) -> Begin {
        let rules::Refusal { error, scope, key } = refusal;
        if self.log.is_on() {
            let status = error.status();
            self.reject(now, scope, key, status, Rejection::Invalid(error.clone()));
        }
        Begin::Invalid(error)
    }

    fn reject(&mut self, now: u64, scope: &str, key: Option<&str>, status: u16, reason: Rejection) {
        self.log
            .push(now, scope, key, EventKind::Rejected { status, reason });
    }

    fn fenced(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Fenced {
        self.log_id(now, id, EventKind::Fenced { token: lease.token });
        Fenced
    }

    fn log_ref(&mut self, now: u64, id: IdRef<'_>, kind: EventKind) {
        self.log.push(now, id.scope, Some(id.key), kind);
    }

    fn log_id(&mut self, now: u64, id: &RecordId, kind: EventKind) {
        self.log.push_id(now, id, kind);
    }
}
