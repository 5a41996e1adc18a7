//! The TypeScript declarations of the package's plain objects (options, outcomes, listings);
//! wasm-bindgen writes the class itself from `client.rs`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Options of `new IdempotentClient(options)`. */
export interface ClientOptions {
  /** URL every attempt is sent to, e.g. '/api/checkout'. */
  endpoint: string;
  /** HTTP method (default 'POST'). POST and PATCH carry an Idempotency-Key; others only with `alwaysKey` (GET and HEAD send no body). */
  method?: 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'GET' | 'HEAD' | null;
  /** Send an Idempotency-Key whatever the method (default false). */
  alwaysKey?: boolean;
  /** Retry policy; missing fields take their defaults. */
  policy?: Partial<RetryPolicy>;
  /** localStorage key prefix (default 'idem:'); Web Lock names use it too. */
  storagePrefix?: string | null;
  /** If localStorage fails, send with a key kept only in memory (default false: refuse). */
  allowMemoryOnly?: boolean;
  /** Extra headers sent on every attempt. */
  headers?: Record<string, string>;
  /**
   * Send `Repeatability-First-Sent` (when the operation was first sent, an HTTP-date) with every
   * keyed attempt, for the server's expired-key guard (default true). Turn it off only for a
   * cross-origin server whose CORS does not allow that header: its preflight refuses every
   * attempt that carries it.
   */
  sendFirstSent?: boolean;
  /**
   * Where the Web Locks API is missing: how long a new operation waits after writing its key,
   * before reading it back and sending, so that two tabs starting it at the same instant end
   * up with one key (default 250 ms; 0 skips the wait). Where Web Locks exist, how long a
   * tab keeps an operation's lock after its work, so the next tab reads its writes.
   */
  settleWithoutLocksMs?: number;
  /**
   * The server's key-state endpoint, which `reconcile(name)` asks, with `{key}` where the key
   * goes (sent with `headers`). Default: idem-server's route at the endpoint's origin, e.g.
   * 'http://127.0.0.1:8000/api/keys/{key}' for 'http://127.0.0.1:8000/api/checkout', and
   * '/api/keys/{key}' for '/api/checkout'.
   */
  keyStateUrl?: string | null;
}

/** Retry policy (all durations in ms). */
export interface RetryPolicy {
  /** First backoff delay (default 500), doubling per failure; also the floor under which a Retry-After is not trusted. */
  initialBackoffMs: number;
  /** Backoff cap (default 5000). */
  maxBackoffMs: number;
  /** Spread delays over [d/2, d] (default true). */
  jitter: boolean;
  /** Per-attempt timeout (default 10000). */
  attemptTimeoutMs: number;
  /**
   * Attempts may be sent until this long after creation (default 86400000, 24 h), and a settled
   * operation's key is reused until then. Keep it no longer than the server's retention.
   */
  retryWindowMs: number;
  /** Optional cap on attempts (default none). */
  maxAttempts: number | null;
}

/** How an operation ended. */
export interface Outcome {
  name: string;
  kind: 'succeeded' | 'replayed' | 'rejected' | 'unknown';
  /** HTTP status of the final answer (absent when unknown). */
  status?: number;
  /** Response body: parsed JSON when it is JSON, else text (absent when unknown). */
  body?: unknown;
  /** Problem details of a rejection, when the body is one. */
  problem?: { type?: string; title?: string; status?: number; detail?: string };
  /** The Idempotency-Key sent, or null for an unkeyed operation. */
  key: string | null;
  /** Attempts sent in total under this key, across reloads and duplicate submits. */
  attempts: number;
  /** Where the key lived: 'journaled' (localStorage), 'memoryOnly' or 'unkeyed'. */
  durability: 'journaled' | 'memoryOnly' | 'unkeyed';
  /**
   * The last failure, for an unknown outcome (absent when it was not kept across a reload), in
   * words: 'timed out', 'status 503', 'network error: …', or 'key expired: reconcile before
   * paying again' when the server refused a retry whose first send it no longer remembers (412).
   */
  lastError?: string;
}

/**
 * What `reconcile(name)` learned from the server's key-state endpoint: an `Outcome`, and how
 * it was reconciled.
 */
export interface Reconciliation extends Outcome {
  /**
   * 'done': the server finished the work; `kind` ('replayed' for a 2xx, else 'rejected'),
   * `status` and `body` are its saved answer, and the operation is settled (listed by `settled()`).
   * 'inFlight': a worker holds (or held) the claim: the work may still commit; `kind` is
   * 'unknown' and the record stays; ask again, or `resume(name)`, after `leaseLeftMs` (0: the
   * claim is stale and the next attempt takes it over).
   * 'released': the server released the claim after a failure that saved no answer: the
   * work did not complete (nothing committed), and the key is free for this same payload
   * (another payload under it is refused, 422). `kind` is 'unknown' and the record stays:
   * `resume(name)` sends it again with the same key and bytes, and the server runs the work
   * again from where it stopped (no second charge).
   * 'notFound': the server has no live claim under the key: no attempt reached it, or its
   * retention passed (or it is a server that deletes released claims). `kind` is 'unknown' and
   * the record stays: within the retry window `resume(name)` sends it again under the same
   * key; past it, check with the business before paying again.
   * 'keyExpired': the operation ended unknown because the server refused it as expired (412:
   * its first send is older than the server keeps keys; `lastError` says "key expired"), and the
   * server has no record of the key: whether it ran cannot be learned from the server's key
   * table any more. `kind` is 'unknown' and the record stays; `resume(name)` would be refused
   * again. Check with the business (the order, the charge) before paying again under a new
   * operation name.
   * 'anotherRequest': the server's answer names the request that holds the key (idem-server
   * does), and it is another one (another body or endpoint): this payload never ran under the
   * key. `kind` is 'rejected' with `status` 422, as any attempt of it would be answered, and
   * the operation is settled; nothing of the other request's answer is shown.
   */
  reconciled: 'done' | 'inFlight' | 'released' | 'notFound' | 'keyExpired' | 'anotherRequest';
  /** How long ago the current lease was taken (inFlight). */
  leaseAgeMs?: number;
  /** How long until the claim may be taken over (inFlight). */
  leaseLeftMs?: number;
}

/** What `submit`, `resume`, `reconcile`, `pending`, `settled`, `discard`, `watch` and the constructor reject or throw. */
export interface IdempotencyError extends Error {
  name: 'IdempotencyError';
  code:
    | 'invalidOptions'
    | 'pendingWithDifferentPayload'
    | 'settledWithDifferentPayload'
    | 'notPersisted'
    | 'unreadable'
    | 'payload'
    | 'unavailable'
    | 'reconcileFailed';
}

/** An unsettled operation in localStorage, as listed by `pending()`. */
export interface PendingOperation {
  name: string;
  /** Absent when the record is unreadable (see `error`). */
  key?: string;
  attempts?: number;
  createdAt?: number;
  /** 'pending', or 'unknown' when the retry window closed without an answer. */
  status?: 'pending' | 'unknown';
  /** The canonical payload, parsed. */
  payload?: unknown;
  /** Why the record cannot be read (corrupt, foreign, newer format). */
  error?: string;
}

/** An operation that got its final answer, as listed by `settled()`: its key is reused by a duplicate submit of the same payload until `expiresAt`. */
export interface SettledOperation {
  name: string;
  key: string;
  /** HTTP status of the final answer. */
  status: number;
  attempts: number;
  createdAt: number;
  settledAt: number;
  /** Until then (ms since the epoch) the key is reused; a different payload is refused until `discard(name)`. */
  expiresAt: number;
}

/** An entry change seen through the `storage` event (another tab's progress). */
export interface JournalChange {
  name: string;
  /** The open record now stored, or null when there is none (settled there, or discarded). */
  record: PendingOperation | null;
  /** The settled entry now stored, when the operation got its answer there. */
  settled: SettledOperation | null;
}
"#;
