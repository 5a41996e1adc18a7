//! A TCP proxy between `serve` and PostgreSQL that delivers every chunk PostgreSQL sends a few
//! milliseconds late (2–5 ms, seeded), in order, as a database across a network does; what
//! `serve` sends passes at once. On loopback PostgreSQL answers in microseconds, so a request
//! is almost never caught while it waits on its database; with this proxy every round trip
//! is a wait a client's cut can land in.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    task::JoinHandle,
    time::Instant,
};

use crate::log::Log;

/// Each server-to-client chunk is delayed by this many ms, drawn per chunk.
const DELAY_MS: std::ops::RangeInclusive<u64> = 2..=5;

/// A running proxy; stops accepting when dropped.
pub struct LatencyProxy {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    accept: JoinHandle<()>,
}

impl LatencyProxy {
    /// A proxy to `upstream` (`host:port`).
    pub async fn start(upstream: String, seed: u64, log: Log) -> LatencyProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the latency proxy");
        let addr = listener.local_addr().expect("its address").to_string();
        let rng = Arc::new(Mutex::new(ChaCha8Rng::seed_from_u64(seed)));
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, rng, log) = (upstream.clone(), rng.clone(), log.clone());
                tokio::spawn(async move {
                    match TcpStream::connect(&upstream).await {
                        Ok(server) => pipe(client, server, rng).await,
                        Err(e) => log.line(format!("latency proxy: upstream {upstream}: {e}")),
                    }
                });
            }
        });
        LatencyProxy { addr, accept }
    }

    /// `postgres://user@HOST:PORT/db` with its host and port replaced by this proxy's.
    pub fn url_for(&self, url: &str) -> String {
        let (head, rest) = url.split_once('@').expect("postgres://user@host:port/db");
        let (_, database) = rest.split_once('/').expect("a database in the URL");
        format!("{head}@{}/{database}", self.addr)
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Relay one connection both ways until either side closes; then close the other, so
/// PostgreSQL ends the session (rolling back its open transaction) as soon as `serve` dies.
async fn pipe(client: TcpStream, server: TcpStream, rng: Arc<Mutex<ChaCha8Rng>>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let requests = async {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    };
    // Chunks from PostgreSQL, each stamped with when it may be delivered; one writer
    // delivers them in order.
    let (chunks, mut due) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read_answers = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let delay = rng
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .random_range(DELAY_MS);
                    let at = Instant::now() + Duration::from_millis(delay);
                    if chunks.send((at, buf[..n].to_vec())).is_err() {
                        break;
                    }
                }
            }
        }
    };
    let deliver_answers = async {
        while let Some((at, chunk)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            if client_write.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    };
    // Either direction ending ends the connection: dropping both halves closes it.
    tokio::select! {
        () = requests => {}
        () = async { tokio::join!(read_answers, deliver_answers); } => {}
    }
}
