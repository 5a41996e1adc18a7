//! A latency proxy on 127.0.0.1 between a client and a database server: every chunk the
//! server sends reaches the client `delay` later, as answers from a database on the network
//! do. Between a test and PostgreSQL it makes every round trip an await that is really
//! pending, so a future dropped "at its Nth poll" stops at each of its round trips, not only
//! at those the loopback happened to answer slowly.

#![allow(dead_code)]

use std::{net::SocketAddr, time::Duration};

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

impl LatencyProxy {
    /// Proxy to `upstream`, delaying what it sends back by `delay`.
    pub async fn start(upstream: SocketAddr, delay: Duration) -> LatencyProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the latency proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream, delay));
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

/// The client's bytes go straight up; the server's come back `delay` late, in order.
async fn relay(client: TcpStream, upstream: SocketAddr, delay: Duration) {
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
        tokio::time::sleep(delay).await;
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = client_write.shutdown().await;
    up.abort();
}
