//! idem-store: the server-side idempotency claim table (work in progress).
