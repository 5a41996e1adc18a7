-- The claim table, the recovery points and the fencing-token counter (SQLite).
-- Same columns and meaning as ../postgres/0001_claims.sql; times are milliseconds.

-- One row per (scope, key): the claim while in flight, the saved response when done.
CREATE TABLE idem_claims (
    scope                 TEXT    NOT NULL,
    key                   TEXT    NOT NULL,
    -- SHA-256 of the operation and the canonical body (32 bytes).
    fingerprint           BLOB    NOT NULL,
    -- The claiming route's error policy: 'release-claim' or 'save-response'.
    on_error              TEXT    NOT NULL,
    -- 'in_flight' or 'done'.
    status                TEXT    NOT NULL,
    -- The lease: fencing token and when it was taken (the last holder's, once done).
    token                 INTEGER NOT NULL,
    locked_at             INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL,
    -- The saved response, when done.
    response_status       INTEGER,
    response_content_type TEXT,
    -- JSON array of [name, value] pairs to replay.
    response_headers      TEXT,
    response_body         BLOB,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idem_claims_expires_at ON idem_claims (expires_at);

-- The work's recovery point per (scope, key, fingerprint), written in the claim's
-- transaction. It outlives a released claim, so the next worker with the same request
-- resumes it (and calls downstream under the same key); another payload never sees it.
CREATE TABLE idem_recovery (
    scope       TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint BLOB    NOT NULL,
    point       BLOB    NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (scope, key, fingerprint)
);

CREATE INDEX idem_recovery_expires_at ON idem_recovery (expires_at);

-- SQLite has no sequences: one row counts the tokens handed out, bumped inside each
-- claim's or takeover's write transaction, so tokens only grow (never reused after a
-- release or a prune, as MAX(token) + 1 would be).
CREATE TABLE idem_lease_token (
    last INTEGER NOT NULL
);

INSERT INTO idem_lease_token (last) VALUES (0);
