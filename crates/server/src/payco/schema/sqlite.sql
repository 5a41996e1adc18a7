-- PayCo's ledger: one row per charge attempt PayCo decided (charged or declined), written in
-- the same transaction as the saved response of its idempotency key, so a key's answer and
-- its ledger row exist together or not at all.
CREATE TABLE IF NOT EXISTS ledger (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    merchant   TEXT    NOT NULL,
    idem_key   TEXT    NOT NULL,
    order_id   INTEGER NOT NULL,
    amount     INTEGER NOT NULL,
    card       TEXT    NOT NULL,
    outcome    TEXT    NOT NULL CHECK (outcome IN ('charged', 'declined')),
    created_at INTEGER NOT NULL,
    UNIQUE (merchant, idem_key)
);
