//! The `serve` processes of a run and its receipts service (the outbox's consumer), and the
//! nemesis that acts on them at the plan's times: SIGKILL and restart on the same port and
//! database, SIGSTOP for longer than a lease then SIGCONT, and idem-server's own checkpoints
//! armed process-wide for a moment at any of the checkout's points or the outbox's
//! (`relay-after-send` on a `serve`, `consumer-after-effect` on the receipts service; `hang`,
//! `crash`, `drop`, `hold:800`, `unavailable`: `plan::VERDICTS`).
//! The verdict `panic` is left out: it answers a 500 by design, and the checker holds every
//! run to "no 500".

use std::{sync::Arc, time::Duration};

use tokio::{
    sync::{Mutex, Notify},
    task::JoinHandle,
};

use crate::{
    log::{Clock, Log},
    plan::{Action, Event},
    support::process::Service,
};

/// The least time between the end of one event and the start of the next, in ms.
const GAP_MS: u64 = 1_000;

/// One process (a `serve`, or the receipts service): its command, its port, and the
/// process while it runs.
struct Slot {
    args: Vec<String>,
    /// `127.0.0.1:PORT`, the same across restarts (the fault proxies and the relays keep
    /// pointing at it).
    listen: String,
    running: Option<Service>,
    /// `serve0`, …, or `receipts`: how the log names it.
    name: String,
}

/// The run's `serve` processes, and its receipts service.
#[derive(Clone)]
pub struct Servers {
    slots: Arc<Mutex<Vec<Slot>>>,
    /// The receipts service every `serve`'s relay delivers to.
    consumer: Arc<Mutex<Slot>>,
    log: Log,
}

impl Servers {
    /// Take `consumer` (the running receipts service, started with `consumer_args`) and start
    /// one `serve` per entry of `commands` (one after the other: the first creates the
    /// schema).
    pub async fn start(
        consumer: Service,
        consumer_args: Vec<String>,
        commands: Vec<Vec<String>>,
        log: Log,
    ) -> Servers {
        let mut consumer_slot = Slot {
            args: consumer_args,
            listen: consumer.addr().to_owned(),
            running: None,
            name: "receipts".to_owned(),
        };
        consumer_slot.run(consumer, &log);
        let mut slots = Vec::new();
        for (i, args) in commands.into_iter().enumerate() {
            let service = Service::start(&args).await;
            let listen = service.addr().to_owned();
            let mut slot = Slot {
                args,
                listen,
                running: None,
                name: format!("serve{i}"),
            };
            slot.run(service, &log);
            slots.push(slot);
        }
        Servers {
            slots: Arc::new(Mutex::new(slots)),
            consumer: Arc::new(Mutex::new(consumer_slot)),
            log,
        }
    }

    /// Their `host:port`s.
    pub async fn addrs(&self) -> Vec<String> {
        self.slots
            .lock()
            .await
            .iter()
            .map(|s| s.listen.clone())
            .collect()
    }

    /// The counter `name` (`idem_…_total`) from each `serve`'s `GET /metrics`, as
    /// (`serveN`, value). The nemesis has stopped when this is asked; a `serve` a late
    /// failpoint crash stopped is started again first, and a refused connection is tried again
    /// for up to 10 s before the run fails.
    pub async fn counter(&self, name: &str) -> Vec<(String, u64)> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("reqwest client");
        // A request that passed an armed crash failpoint just before the nemesis turned it off
        // can crash its `serve` after the nemesis stopped watching: start it again first.
        for (i, slot) in self.slots.lock().await.iter_mut().enumerate() {
            if slot.running.as_mut().is_some_and(|s| s.has_exited()) {
                self.log
                    .line(format!("serve{i} had exited (a late failpoint crash)"));
                slot.running = None;
                slot.restart(&self.log).await;
            }
        }
        let mut values = Vec::new();
        for (i, addr) in self.addrs().await.into_iter().enumerate() {
            let url = format!("http://{addr}/metrics");
            let mut tries = 0;
            let response = loop {
                match http.get(&url).send().await {
                    Ok(response) => break response,
                    Err(e) if e.is_connect() && tries < 50 => {
                        tries += 1;
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    Err(e) => panic!("GET {url}: {e:?}"),
                }
            };
            let text = response.text().await.expect("read /metrics");
            let value = text
                .lines()
                .find_map(|line| line.strip_prefix(name)?.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("serve{i} has no {name} in {text}"));
            self.log.line(format!("serve{i}: {name} {value}"));
            values.push((format!("serve{i}"), value));
        }
        values
    }

    /// SIGKILL every `serve`.
    pub async fn kill_all(&self) {
        for (i, slot) in self.slots.lock().await.iter_mut().enumerate() {
            if let Some(service) = slot.running.take() {
                service.kill().await;
                self.log.line(format!("final: SIGKILL serve{i}"));
            }
        }
    }

    /// Start `serve` number `i` again (after [`kill_all`](Self::kill_all)); its URL.
    pub async fn restart(&self, i: usize) -> String {
        let mut slots = self.slots.lock().await;
        let slot = &mut slots[i];
        slot.restart(&self.log).await;
        format!("http://{}", slot.listen)
    }

    /// The receipts service's URL, started again first if it is not running (a late failpoint
    /// crash) or `fresh` (no failpoint left armed).
    pub async fn consumer(&self, fresh: bool) -> String {
        let mut slot = self.consumer.lock().await;
        let exited = slot.running.as_mut().is_none_or(|s| s.has_exited());
        if exited || fresh {
            if let Some(service) = slot.running.take() {
                service.kill().await;
            }
            self.log.line(format!(
                "receipts {}; starting it again",
                if exited { "had exited" } else { "stopped" }
            ));
            slot.restart(&self.log).await;
        }
        format!("http://{}", slot.listen)
    }

    /// SIGKILL the receipts service.
    pub async fn kill_consumer(&self) {
        if let Some(service) = self.consumer.lock().await.running.take() {
            service.kill().await;
            self.log.line("final: SIGKILL receipts");
        }
    }

    /// Carry out one event; a restart, if any, is done before this returns.
    async fn act(&self, event: Event, http: &reqwest::Client) {
        // The consumer's point is armed on the receipts service, every other on a `serve`.
        if let Action::Failpoint {
            step: "consumer-after-effect",
            action,
            ms,
        } = event.action
        {
            let mut consumer = self.consumer.lock().await;
            consumer
                .arm("consumer-after-effect", action, ms, http, &self.log)
                .await;
            return;
        }
        let mut slots = self.slots.lock().await;
        let i = event.server;
        let Some(slot) = slots.get_mut(i) else {
            return;
        };
        let log = &self.log;
        match event.action {
            Action::Kill { restart_after_ms } => {
                if let Some(service) = slot.running.take() {
                    service.kill().await;
                }
                log.line(format!("nemesis: SIGKILL serve{i}"));
                tokio::time::sleep(Duration::from_millis(restart_after_ms)).await;
                slot.restart(log).await;
            }
            Action::Pause { ms } => {
                let Some(service) = slot.running.as_ref() else {
                    return;
                };
                service.signal("STOP");
                log.line(format!("nemesis: SIGSTOP serve{i} for {ms} ms"));
                tokio::time::sleep(Duration::from_millis(ms)).await;
                service.signal("CONT");
                log.line(format!("nemesis: SIGCONT serve{i}"));
            }
            Action::Failpoint { step, action, ms } => {
                slot.arm(step, action, ms, http, log).await;
            }
        }
    }
}

impl Slot {
    /// Keep `service` as the running process, its stderr going to the log.
    fn run(&mut self, mut service: Service, log: &Log) {
        let (log, name) = (log.clone(), self.name.clone());
        service.forward_stderr(move |line| log.line(format!("{name} stderr: {line}")));
        self.running = Some(service);
    }

    /// The same command on the same port; the process that ran there must be gone.
    async fn restart(&mut self, log: &Log) {
        let service = Service::start_on(&self.listen, &self.args).await;
        log.line(format!("{} restarted on {}", self.name, self.listen));
        self.run(service, log);
    }

    /// Arm `step` with `action` for `ms`, then turn it off; a process that crashed meanwhile
    /// is restarted (which turns it off too).
    async fn arm(
        &mut self,
        step: &'static str,
        action: &'static str,
        ms: u64,
        http: &reqwest::Client,
        log: &Log,
    ) {
        let name = self.name.clone();
        let url = format!("http://{}/api/failpoints/{step}", self.listen);
        let set = |action: &'static str| http.put(&url).body(action).send();
        match set(action).await {
            Ok(r) => log.line(format!("nemesis: {name} {step}={action}: {}", r.status())),
            Err(e) => log.line(format!("nemesis: {name} {step}={action} not set: {e}")),
        }
        let armed_until = tokio::time::Instant::now() + Duration::from_millis(ms);
        while tokio::time::Instant::now() < armed_until {
            if self.running.as_mut().is_some_and(|s| s.has_exited()) {
                log.line(format!("nemesis: {name} crashed at {step}; restarting"));
                self.running = None;
                self.restart(log).await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        match set("off").await {
            Ok(r) => log.line(format!("nemesis: {name} {step}=off: {}", r.status())),
            Err(e) => log.line(format!("nemesis: {name} {step}=off not set: {e}")),
        }
    }
}

/// The nemesis, running the plan's events at their times until told to stop.
pub struct Nemesis {
    stop: Arc<Notify>,
    task: JoinHandle<()>,
}

impl Nemesis {
    /// Run `events`, their times counted from `t0` on `clock`.
    pub fn start(servers: Servers, events: Vec<Event>, clock: Clock, t0: u64) -> Nemesis {
        let stop = Arc::new(Notify::new());
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(2))
                .build()
                .expect("reqwest client");
            let mut ended = 0;
            for event in events {
                // At its time, and never sooner than a second after the last one ended: a
                // late restart must not leave the servers down or stopped most of the run.
                let at = (t0 + event.at_ms).max(ended + GAP_MS);
                tokio::select! {
                    () = clock.sleep_until(at) => {}
                    () = stopped.notified() => return,
                }
                servers.act(event, &http).await;
                ended = clock.now_ms();
            }
        });
        Nemesis { stop, task }
    }

    /// Stop before the next event; the one under way finishes first (a paused server is
    /// continued, a killed one restarted).
    pub async fn stop(self) {
        // A permit is kept if the task is not waiting right now: it stops at its next wait.
        self.stop.notify_one();
        self.task.await.expect("the nemesis task");
    }
}
