//! A TCP proxy between clients and the server under test, failing each connection (one
//! request: the clients open a connection per attempt) in a seeded way:
//!
//! | fault | what the client sees | what the server sees |
//! |---|---|---|
//! | pass | the answer | the request |
//! | drop the request | the connection closes unanswered | nothing |
//! | drop the response | the connection closes unanswered | the request, answered in full |
//! | hold the response | no answer before its attempt timeout | the request, answered in full |
//! | duplicate | the first copy's answer | the request twice, on two connections (to two servers when there are two) |
//! | cut a few ms in | the connection closes unanswered | its client gone 1–20 ms into the request, mostly while it waits on its database |
//!
//! A mock of nothing: the bytes are the clients' and the servers' own; the proxy only reads
//! enough HTTP/1.1 to know where a request ends (to drop or duplicate it whole) and what
//! status an answer carries (for the log). Requests are read whole only by `Content-Length`:
//! a chunked request body is relayed as far as its head says, which is why the clients this
//! proxy serves always send a length.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

use serde::{Deserialize, Serialize};

/// Where the proxy's lines go (each connection's fault and what the server answered).
pub type LogSink = Arc<dyn Fn(String) + Send + Sync>;

/// What happens to one connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Relayed both ways.
    Pass,
    /// The request is read and never forwarded; the client's connection is closed.
    DropRequest,
    /// Forwarded; the connection is closed as soon as the server starts answering.
    DropResponse,
    /// Forwarded; the answer is held for the proxy's hold time, past the client's attempt
    /// timeout.
    HoldResponse,
    /// Forwarded twice, on two connections; the client gets the first one's answer.
    Duplicate,
    /// Forwarded; both connections are closed `after_ms` later, answered or not.
    Cut {
        /// How long after the request was forwarded.
        after_ms: u64,
    },
}

/// How often each fault is drawn, in parts of the sum (a sum of 0 passes every connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FaultMix {
    /// Relayed both ways.
    pub pass: u32,
    /// The request never reaches the server.
    pub drop_request: u32,
    /// The server answers; the client never hears it.
    pub drop_response: u32,
    /// The server answers; the client hears it only past its attempt timeout.
    pub hold_response: u32,
    /// The server gets the request twice, at once.
    pub duplicate: u32,
    /// Both sides are cut 1–20 ms in, answered or not.
    pub cut: u32,
}

impl Default for FaultMix {
    fn default() -> Self {
        Self::CHAOS
    }
}

impl FaultMix {
    /// Every fault; cuts the most often (a quarter of the connections), since a request cut
    /// while its server waits on the database is the class no other test reaches. With the
    /// fix for pooled connections returned inside a transaction reverted (the guard armed
    /// before `BEGIN`, the pool's net, work outliving its connection), 7 of 8 PostgreSQL runs
    /// broke a rule with this mix, against about 3 of 8 with cuts at 18 % over 1–30 ms.
    pub const CHAOS: FaultMix = FaultMix {
        pass: 40,
        drop_request: 8,
        drop_response: 10,
        hold_response: 6,
        duplicate: 10,
        cut: 26,
    };

    /// The control run's: answers lost after the work ran (dropped, held, cut), often
    /// enough that pages minting a key per attempt surely charge some checkout twice.
    pub const LOST_ANSWERS: FaultMix = FaultMix {
        pass: 50,
        drop_request: 0,
        drop_response: 25,
        hold_response: 10,
        duplicate: 0,
        cut: 15,
    };

    fn draw(&self, rng: &mut ChaCha8Rng) -> Fault {
        let weights = [
            self.pass,
            self.drop_request,
            self.drop_response,
            self.hold_response,
            self.duplicate,
            self.cut,
        ];
        let total = weights.iter().sum::<u32>();
        if total == 0 {
            return Fault::Pass;
        }
        let mut pick = rng.random_range(0..total);
        let mut which = 0;
        while pick >= weights[which] {
            pick -= weights[which];
            which += 1;
        }
        match which {
            0 => Fault::Pass,
            1 => Fault::DropRequest,
            2 => Fault::DropResponse,
            3 => Fault::HoldResponse,
            4 => Fault::Duplicate,
            _ => Fault::Cut {
                after_ms: rng.random_range(1..=20),
            },
        }
    }
}

/// A running proxy; stops accepting when dropped (connections under way carry on).
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    /// A proxy on a free port of 127.0.0.1 to `upstreams` (`host:port` each; a connection
    /// goes to one drawn at random), drawing faults from `mix` with a generator seeded by
    /// `seed`, holding a held answer for `hold`, logging to `log` as `label`.
    pub async fn start(
        upstreams: Vec<String>,
        mix: FaultMix,
        seed: u64,
        hold: Duration,
        log: LogSink,
        label: String,
    ) -> std::io::Result<FaultProxy> {
        if upstreams.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the fault proxy needs an upstream",
            ));
        }
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let rng = Arc::new(Mutex::new(ChaCha8Rng::seed_from_u64(seed)));
        let count = Arc::new(AtomicUsize::new(0));
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let n = count.fetch_add(1, Ordering::Relaxed);
                let (fault, to, other) = {
                    let mut rng = rng.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    let fault = mix.draw(&mut rng);
                    let to = rng.random_range(0..upstreams.len());
                    (fault, to, (to + 1) % upstreams.len())
                };
                let connection = Connection {
                    name: format!("{label} conn {n} to upstream {to}"),
                    upstream: upstreams[to].clone(),
                    duplicate_to: upstreams[other].clone(),
                    hold,
                    log: log.clone(),
                };
                tokio::spawn(connection.run(client, fault));
            }
        });
        Ok(FaultProxy { url, accept })
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

struct Connection {
    name: String,
    upstream: String,
    duplicate_to: String,
    hold: Duration,
    log: LogSink,
}

impl Connection {
    async fn run(self, mut client: TcpStream, fault: Fault) {
        let Some(request) = read_request(&mut client).await else {
            self.note(fault, "no whole request arrived");
            return;
        };
        if fault == Fault::DropRequest {
            self.note(fault, "request dropped, connection closed");
            return;
        }
        let mut server = match connect_and_send(&self.upstream, &request).await {
            Ok(server) => server,
            Err(e) => {
                // The server is down (killed, crashed, not yet restarted): refused.
                self.note(fault, &format!("upstream refused: {e}; connection closed"));
                return;
            }
        };
        match fault {
            Fault::Pass => {
                let status = relay(&mut client, &mut server).await;
                self.note(fault, &status);
            }
            Fault::DropRequest => {}
            Fault::DropResponse => {
                let (answer, _) = first_bytes(Some(&mut client), &mut server, None).await;
                self.note(fault, &format!("{answer}; connection closed"));
            }
            Fault::HoldResponse => {
                let (answer, first) = first_bytes(Some(&mut client), &mut server, None).await;
                let held = self.hold.as_millis();
                self.note(fault, &format!("{answer}; held {held} ms"));
                tokio::time::sleep(self.hold).await;
                let late = match client.write_all(&first).await {
                    Ok(()) => relay(&mut client, &mut server).await,
                    Err(_) => "client gone".to_owned(),
                };
                self.note(fault, &format!("held answer released: {late}"));
            }
            Fault::Duplicate => {
                let copy = self.send_copy(request);
                let status = relay(&mut client, &mut server).await;
                self.note(fault, &format!("first copy: {status}"));
                copy.await.ok();
            }
            Fault::Cut { after_ms } => {
                let limit = Some(Duration::from_millis(after_ms));
                let (answer, _) = first_bytes(Some(&mut client), &mut server, limit).await;
                self.note(fault, &format!("cut: {answer}"));
            }
        }
    }

    /// The request again on a connection of its own; its answer is logged and dropped.
    fn send_copy(&self, request: Vec<u8>) -> JoinHandle<()> {
        let (to, log, name) = (
            self.duplicate_to.clone(),
            self.log.clone(),
            self.name.clone(),
        );
        tokio::spawn(async move {
            let status = match connect_and_send(&to, &request).await {
                Ok(mut server) => first_bytes(None, &mut server, None).await.0,
                Err(e) => format!("upstream refused: {e}"),
            };
            log(format!("{name}: duplicate copy to {to}: {status}"));
        })
    }

    fn note(&self, fault: Fault, what: &str) {
        (self.log)(format!("{}: {fault:?}: {what}", self.name));
    }
}

async fn connect_and_send(upstream: &str, request: &[u8]) -> std::io::Result<TcpStream> {
    let mut server = TcpStream::connect(upstream).await?;
    server.write_all(request).await?;
    Ok(server)
}

/// One whole HTTP/1.1 request (head and `Content-Length` body), or `None` if the client
/// closed first or took more than 5 s.
async fn read_request(client: &mut TcpStream) -> Option<Vec<u8>> {
    let read = async {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8 * 1024];
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut head = httparse::Request::new(&mut headers);
            if let Ok(httparse::Status::Complete(head_len)) = head.parse(&bytes) {
                let body_len = head
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok())
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if bytes.len() >= head_len + body_len {
                    return Some(bytes);
                }
            }
            match client.read(&mut buf).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .ok()
        .flatten()
}

/// Relay the answer to the client until either side closes; what the server answered, for
/// the log.
async fn relay(client: &mut TcpStream, server: &mut TcpStream) -> String {
    let mut status: Option<String> = None;
    let (mut from_server, mut from_client) = ([0u8; 16 * 1024], [0u8; 1024]);
    loop {
        tokio::select! {
            read = server.read(&mut from_server) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    status.get_or_insert_with(|| status_of(&from_server[..n]));
                    if client.write_all(&from_server[..n]).await.is_err() {
                        return format!("answered {}, client gone", status.unwrap_or_default());
                    }
                }
            },
            read = client.read(&mut from_client) => match read {
                // The client closes once it has its answer, or when it gives up waiting.
                Ok(0) | Err(_) => break,
                // Nothing more is expected from a client on a one-request connection.
                Ok(_) => {}
            },
        }
    }
    match status {
        Some(status) => format!("answered {status}"),
        None => "closed before any answer".to_owned(),
    }
}

/// Wait for the server's first answer bytes without relaying them, until `limit` passes or
/// the client (if any) gives up: what was seen, for the log, and the bytes.
async fn first_bytes(
    client: Option<&mut TcpStream>,
    server: &mut TcpStream,
    limit: Option<Duration>,
) -> (String, Vec<u8>) {
    let limit = limit.unwrap_or(Duration::from_secs(30));
    let mut from_server = [0u8; 16 * 1024];
    let client_gone = async {
        let Some(client) = client else {
            return std::future::pending().await;
        };
        let mut from_client = [0u8; 1024];
        // Nothing more is expected from a client on a one-request connection.
        while let Ok(n) = client.read(&mut from_client).await {
            if n == 0 {
                break;
            }
        }
    };
    let wait = async {
        tokio::select! {
            read = server.read(&mut from_server) => match read {
                Ok(0) | Err(_) => ("server closed unanswered".to_owned(), Vec::new()),
                Ok(n) => {
                    let answer = from_server[..n].to_vec();
                    (format!("server answered {}", status_of(&answer)), answer)
                }
            },
            () = client_gone => ("client gone before any answer".to_owned(), Vec::new()),
        }
    };
    tokio::time::timeout(limit, wait).await.unwrap_or_else(|_| {
        let waited = format!("no answer after {} ms", limit.as_millis());
        (waited, Vec::new())
    })
}

/// `201` from `HTTP/1.1 201 Created…`.
fn status_of(answer: &[u8]) -> String {
    let line = answer.split(|&b| b == b'\r').next().unwrap_or_default();
    String::from_utf8_lossy(line)
        .split_whitespace()
        .nth(1)
        .unwrap_or("?")
        .to_owned()
}
