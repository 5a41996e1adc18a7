-- PayCo's ledger (see sqlite.sql).
CREATE TABLE IF NOT EXISTS ledger (
    id         BIGSERIAL PRIMARY KEY,
    merchant   TEXT   NOT NULL,
    idem_key   TEXT   NOT NULL,
    order_id   BIGINT NOT NULL,
    amount     BIGINT NOT NULL,
    card       TEXT   NOT NULL,
    outcome    TEXT   NOT NULL CHECK (outcome IN ('charged', 'declined')),
    created_at BIGINT NOT NULL,
    UNIQUE (merchant, idem_key)
);
