-- The claim table, the recovery points and the fencing-token sequence (PostgreSQL).
-- Same columns and meaning as ../sqlite/0001_claims.sql; times are milliseconds.

-- One row per (scope, key): the claim while in flight, the saved response when done.
CREATE TABLE idem_claims (
    scope                 TEXT   NOT NULL,
    key                   TEXT   NOT NULL,
    -- SHA-256 of the operation and the canonical body (32 bytes).
    fingerprint           BYTEA  NOT NULL,
    -- The claiming route's error policy: 'release-claim' or 'save-response'.
    on_error              TEXT   NOT NULL,
    -- 'in_flight' or 'done'.
    status                TEXT   NOT NULL,
    -- The lease: fencing token and when it was taken (the last holder's, once done).
    token                 BIGINT NOT NULL,
    locked_at             BIGINT NOT NULL,
    created_at            BIGINT NOT NULL,
    expires_at            BIGINT NOT NULL,
    -- The saved response, when done.
    response_status       BIGINT,
    response_content_type TEXT,
    -- JSON array of [name, value] pairs to replay.
    response_headers      TEXT,
    response_body         BYTEA,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idem_claims_expires_at ON idem_claims (expires_at);

-- The work's recovery point per (scope, key, fingerprint), written in the claim's
-- transaction. It outlives a released claim, so the next worker with the same request
-- resumes it (and calls downstream under the same key); another payload never sees it.
CREATE TABLE idem_recovery (
    scope       TEXT   NOT NULL,
    key         TEXT   NOT NULL,
    fingerprint BYTEA  NOT NULL,
    point       BYTEA  NOT NULL,
    expires_at  BIGINT NOT NULL,
    PRIMARY KEY (scope, key, fingerprint)
);

CREATE INDEX idem_recovery_expires_at ON idem_recovery (expires_at);

-- Fencing tokens: one sequence shared by every server on this database, so two
-- takeovers in the same millisecond on two machines still get different tokens.
CREATE SEQUENCE idem_lease_token;
