//! A latency proxy on 127.0.0.1 between a client and a database server: every chunk the
//! server sends reaches the client a delay later, as answers from a database on the network
//! do: a fixed one, or one drawn per chunk from a range with a seeded generator. Between a
//! test and PostgreSQL it makes every round trip an await that is really pending, so a
//! future dropped "at its Nth poll" stops at each of its round trips, not only at those the
//! loopback happened to answer slowly (the cancellation tests), and a client that gives up a
//! few ms into a request catches its server waiting on the database (the chaos test).

#![allow(dead_code)]

use std::{
    net::SocketAddr,
    ops::RangeInclusive,
    sync::{Arc, Mutex},
    time::Duration,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

/// A running proxy; it stops when dropped.
pub struct LatencyProxy {
    addr: SocketAddr,
    accept: JoinHandle<()>,
}

/// How late each chunk from the server arrives.
enum Delay {
    Fixed(Duration),
    /// Drawn per chunk, in whole ms, from one generator shared by the proxy's connections.
    Drawn {
        ms: RangeInclusive<u64>,
        rng: Box<Mutex<ChaCha8Rng>>,
    },
}

impl Delay {
    fn next(&self) -> Duration {
        match self {
            Delay::Fixed(delay) => *delay,
            Delay::Drawn { ms, rng } => {
                let mut rng = rng.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                Duration::from_millis(rng.random_range(ms.clone()))
            }
        }
    }
}

impl LatencyProxy {
    /// Proxy to `upstream`, delaying what it sends back by `delay`.
    pub async fn start(upstream: SocketAddr, delay: Duration) -> LatencyProxy {
        Self::with(upstream, Delay::Fixed(delay)).await
    }

    /// Proxy to `upstream`, delaying each chunk it sends back by a number of ms drawn from
    /// `ms` with a generator seeded by `seed`.
    pub async fn start_drawn(
        upstream: SocketAddr,
        ms: RangeInclusive<u64>,
        seed: u64,
    ) -> LatencyProxy {
        let rng = Box::new(Mutex::new(ChaCha8Rng::seed_from_u64(seed)));
        Self::with(upstream, Delay::Drawn { ms, rng }).await
    }

    async fn with(upstream: SocketAddr, delay: Delay) -> LatencyProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the latency proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let delay = Arc::new(delay);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream, delay.clone()));
            }
        });
        LatencyProxy { addr, accept }
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `url` (`scheme://user@host:port/db`) with its host and port replaced by the proxy's.
    pub fn url_through(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let user = authority
            .rsplit_once('@')
            .map_or(String::new(), |(user, _)| format!("{user}@"));
        format!("{scheme}://{user}{}/{path}", self.addr)
    }
}

impl Drop for LatencyProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// The client's bytes go straight up; the server's come back `delay` late, in order. When
/// either side closes, so does the other (PostgreSQL then ends a dead client's session and
/// rolls back its transaction).
async fn relay(client: TcpStream, upstream: SocketAddr, delay: Arc<Delay>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let up = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = match server_read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tokio::time::sleep(delay.next()).await;
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = client_write.shutdown().await;
    up.abort();
}
