//! `idem-server`: the example checkout (`serve`), the PayCo payment service (`payco`) and
//! the consumer of the checkout's outbox (`receipts`), each on its own port with its own
//! database. See the crate README for the one-command start.

use std::{net::SocketAddr, process::ExitCode, time::Duration};

use clap::{Args, Parser, Subcommand};
use idem_server::{
    app::ServiceConfig,
    checkout::{
        self,
        checkpoint::{self, Point, Verdict},
        outbox::relay::RelayConfig,
        CheckoutConfig,
    },
    completer::CompleterConfig,
    payco::{self, PaycoConfig},
    receipts::{self, ReceiptsConfig},
    request::{BearerTenants, BodyLimits},
    serve::ConnLimits,
};
use idem_store::ErrorPolicy;

mod admin;

#[derive(Parser)]
#[command(name = "idem-server", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The example checkout: POST /api/checkout, GET /api/orders, the claim table, events.
    Serve(ServeArgs),
    /// PayCo, the payment provider the checkout charges: POST /charges, GET /ledger.
    Payco(PaycoArgs),
    /// The consumer of the checkout's outbox: POST /deliveries (from the relay), one receipt
    /// per order.paid message; GET /api/receipts.
    Receipts(ReceiptsArgs),
    /// Operator commands on a database (see the README's "Data and retention").
    #[command(subcommand)]
    Admin(admin::AdminCommand),
}

/// What both services take.
#[derive(Args)]
struct Common {
    /// Address to listen on; port 0 picks a free port (printed on stdout).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// `sqlite:FILE` (created with its schema on first start) or `postgres://…`.
    #[arg(long)]
    database: Option<String>,
    /// Largest request body, in bytes (413 above).
    #[arg(long, default_value_t = idem_store::StoreConfig::DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
    /// Time a client has to send a request body, in milliseconds (408 after).
    #[arg(long, default_value_t = 10_000)]
    body_timeout_ms: u64,
    /// Time a client has to send request headers, and longest idle keep-alive, in ms.
    #[arg(long, default_value_t = 5_000)]
    header_timeout_ms: u64,
    /// How long a claim stays live before another worker may take it over, in ms.
    #[arg(long, default_value_t = idem_store::StoreConfig::DEFAULT_LOCK_MS)]
    lock_ms: u64,
    /// Origins allowed to call from a browser (CORS), e.g. http://127.0.0.1:8080. Repeatable.
    #[arg(long = "cors-origin")]
    cors_origins: Vec<String>,
    #[command(flatten)]
    ops: admin::OpsArgs,
}

#[derive(Args)]
struct ServeArgs {
    #[command(flatten)]
    common: Common,
    /// PayCo's base URL.
    #[arg(long, default_value = "http://127.0.0.1:9090")]
    payco: String,
    /// The merchant's bearer token at PayCo.
    #[arg(long, default_value = "merchant-token")]
    payco_token: String,
    /// Time allowed for one PayCo call, in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    payco_timeout_ms: u64,
    /// A tenant as TOKEN=TENANT: requests with `Authorization: Bearer TOKEN` use the scope
    /// TENANT. Repeatable. Default: token-a=tenant-a and token-b=tenant-b (demo only).
    #[arg(long = "tenant", value_parser = parse_pair)]
    tenants: Vec<(String, String)>,
    /// What a declined payment does to the claim: release-claim or save-response.
    #[arg(long, default_value = "release-claim", value_parser = parse_policy)]
    on_error: ErrorPolicy,
    /// Wait mode: a duplicate of a checkout still in flight waits up to this many ms for its
    /// answer (the replay) instead of a 409. 0: off. At most 9000 (below the SDK's 10 s
    /// attempt timeout); more is cut to that.
    #[arg(long, default_value_t = 0)]
    wait_ms: u64,
    /// Enable failpoints: the checkout's checkpoints, settable at run time with
    /// PUT /api/failpoints/{point} (loopback listen addresses only).
    #[arg(long)]
    failpoints: bool,
    /// Preset a failpoint as POINT=VERDICT (arrival, after-claim, after-charge,
    /// before-commit, after-commit, relay-after-send; off, hang, crash, panic, drop,
    /// unavailable, hold:MS). Repeatable; implies --failpoints.
    #[arg(long = "failpoint", value_parser = checkpoint::parse_setting)]
    failpoint_presets: Vec<(Point, Verdict)>,
    /// The completer: a checkout in flight whose lease was taken this many ms ago and whose
    /// client never came back is taken over and finished from its recovery point (PayCo asked
    /// again under charge:<order>). 0: off.
    #[arg(long, default_value_t = 60_000)]
    complete_after_ms: u64,
    /// Time between the completer's passes, in ms.
    #[arg(long, default_value_t = 5_000)]
    completer_interval_ms: u64,
    /// Abandoned checkouts the completer takes per pass.
    #[arg(long, default_value_t = 100)]
    completer_batch: u32,
    /// The outbox's consumer: the relay posts each unsent message to URL/deliveries.
    #[arg(long, default_value = "http://127.0.0.1:9191")]
    relay_to: String,
    /// The relay's bearer token at the consumer.
    #[arg(long, default_value = "relay-token")]
    relay_token: String,
    /// Time between the relay's passes, in ms. 0: the relay is off (messages wait in the
    /// outbox).
    #[arg(long, default_value_t = 1_000)]
    relay_interval_ms: u64,
    /// Unsent messages the relay reads per pass.
    #[arg(long, default_value_t = 100)]
    relay_batch: u32,
    /// Time allowed for one delivery, in ms.
    #[arg(long, default_value_t = 5_000)]
    relay_timeout_ms: u64,
    /// How long the outbox keeps a sent message, in ms, before the relay deletes it. 0: kept
    /// forever.
    #[arg(long, default_value_t = 86_400_000)]
    outbox_keep_ms: u64,
    /// Demo mode (loopback listen addresses only): the bearer token demo-<uuid> is a tenant
    /// of its own, and each tenant arms faults for its own checkouts (PUT /api/demo/faults).
    /// See the README's "Demo mode".
    #[arg(long)]
    demo_faults: bool,
}

#[derive(Args)]
struct PaycoArgs {
    #[command(flatten)]
    common: Common,
    /// A merchant as TOKEN=MERCHANT. Repeatable. Default: merchant-token=shop (demo only).
    #[arg(long = "merchant", value_parser = parse_pair)]
    merchants: Vec<(String, String)>,
}

#[derive(Args)]
struct ReceiptsArgs {
    #[command(flatten)]
    common: Common,
    /// A sender as TOKEN=NAME, allowed to POST /deliveries. Repeatable. Default:
    /// relay-token=checkout (demo only).
    #[arg(long = "sender", value_parser = parse_pair)]
    senders: Vec<(String, String)>,
    /// A tenant as TOKEN=TENANT, for GET /api/receipts. Repeatable. Default:
    /// token-a=tenant-a and token-b=tenant-b (demo only).
    #[arg(long = "tenant", value_parser = parse_pair)]
    tenants: Vec<(String, String)>,
    /// Enable failpoints, settable at run time with PUT /api/failpoints/{point} (loopback
    /// listen addresses only).
    #[arg(long)]
    failpoints: bool,
    /// Preset a failpoint as POINT=VERDICT (consumer-after-effect; the checkout's points
    /// never fire here). Repeatable; implies --failpoints.
    #[arg(long = "failpoint", value_parser = checkpoint::parse_setting)]
    failpoint_presets: Vec<(Point, Verdict)>,
}

/// `TOKEN=NAME`, where NAME is a valid scope (the store would refuse every request of a
/// tenant whose name is not one, so it is refused here, at start-up).
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((token, name)) if !token.is_empty() => {
            idem_store::validate_scope(name).map_err(|e| format!("{s:?}: {e}"))?;
            Ok((token.to_owned(), name.to_owned()))
        }
        _ => Err(format!("{s:?} is not TOKEN=NAME")),
    }
}

fn parse_policy(s: &str) -> Result<ErrorPolicy, String> {
    ErrorPolicy::parse(s).ok_or_else(|| format!("{s:?} is not release-claim or save-response"))
}

fn tenants(pairs: &[(String, String)], default: &[(&str, &str)]) -> BearerTenants {
    let mut tenants = BearerTenants::new();
    if pairs.is_empty() {
        for (token, name) in default {
            tenants = tenants.with(*token, name);
        }
    }
    for (token, name) in pairs {
        tenants = tenants.with(token.clone(), name);
    }
    tenants
}

impl Common {
    /// The service's settings: `--listen` (else `default_listen`) and `--database` (else
    /// `default_database`).
    fn service(&self, default_listen: u16, database: String) -> ServiceConfig {
        ServiceConfig {
            listen: self
                .listen
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], default_listen))),
            database,
            lock_ms: self.lock_ms,
            body: BodyLimits {
                max_bytes: self.max_body_bytes,
                timeout: Duration::from_millis(self.body_timeout_ms),
            },
            conn: ConnLimits {
                header_read_timeout: Duration::from_millis(self.header_timeout_ms),
            },
            cors_origins: self.cors_origins.clone(),
            ops: self.ops.config(),
        }
    }
}

/// `--database`, else `DATABASE_URL`, else the SQLite file `default`.
fn database(given: Option<String>, default: &str) -> String {
    given
        .or_else(|| std::env::var("DATABASE_URL").ok())
        .unwrap_or_else(|| default.to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only on a terminal: piped to a log collector, lines stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let result = match Cli::parse().command {
        Command::Serve(args) => {
            let database = database(args.common.database.clone(), "sqlite:idem-checkout.db");
            let config = CheckoutConfig {
                service: args.common.service(8000, database),
                payco_url: args.payco.clone(),
                payco_token: args.payco_token.clone(),
                payco_timeout: Duration::from_millis(args.payco_timeout_ms),
                tenants: tenants(
                    &args.tenants,
                    &[("token-a", "tenant-a"), ("token-b", "tenant-b")],
                ),
                on_error: args.on_error,
                wait: (args.wait_ms > 0).then(|| Duration::from_millis(args.wait_ms)),
                failpoints: (args.failpoints || !args.failpoint_presets.is_empty())
                    .then(|| args.failpoint_presets.clone()),
                completer: (args.complete_after_ms > 0).then(|| CompleterConfig {
                    interval: Duration::from_millis(args.completer_interval_ms.max(1)),
                    abandoned_after: Duration::from_millis(args.complete_after_ms),
                    batch: args.completer_batch.max(1),
                }),
                relay: (args.relay_interval_ms > 0).then(|| RelayConfig {
                    url: args.relay_to.clone(),
                    token: args.relay_token.clone(),
                    interval: Duration::from_millis(args.relay_interval_ms),
                    batch: args.relay_batch.max(1),
                    timeout: Duration::from_millis(args.relay_timeout_ms.max(1)),
                    keep_sent: (args.outbox_keep_ms > 0)
                        .then(|| Duration::from_millis(args.outbox_keep_ms)),
                }),
            };
            let mode = if args.demo_faults {
                checkout::Mode::DemoFaults
            } else {
                checkout::Mode::Plain
            };
            checkout::run_with(config, mode)
                .await
                .map_err(|e| e.to_string())
        }
        Command::Payco(args) => {
            // PayCo never reads DATABASE_URL: that names the checkout's database.
            let database = args
                .common
                .database
                .clone()
                .unwrap_or_else(|| "sqlite:idem-payco.db".to_owned());
            let config = PaycoConfig {
                service: args.common.service(9090, database),
                merchants: tenants(&args.merchants, &[("merchant-token", "shop")]),
            };
            payco::run(config).await.map_err(|e| e.to_string())
        }
        Command::Receipts(args) => {
            // Never DATABASE_URL: that names the checkout's database.
            let database = args
                .common
                .database
                .clone()
                .unwrap_or_else(|| "sqlite:idem-receipts.db".to_owned());
            let config = ReceiptsConfig {
                service: args.common.service(9191, database),
                senders: tenants(&args.senders, &[("relay-token", "checkout")]),
                tenants: tenants(
                    &args.tenants,
                    &[("token-a", "tenant-a"), ("token-b", "tenant-b")],
                ),
                failpoints: (args.failpoints || !args.failpoint_presets.is_empty())
                    .then(|| args.failpoint_presets.clone()),
            };
            receipts::run(config).await.map_err(|e| e.to_string())
        }
        Command::Admin(command) => command.run().await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("idem-server: {e}");
            ExitCode::FAILURE
        }
    }
}
