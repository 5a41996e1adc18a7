-- The receipts service's one table (see sqlite.sql for why it looks like this).
CREATE TABLE IF NOT EXISTS receipts (
    id          BIGSERIAL PRIMARY KEY,
    scope       TEXT   NOT NULL,
    message_id  TEXT   NOT NULL,
    order_id    BIGINT NOT NULL,
    amount      BIGINT NOT NULL,
    charge_id   TEXT   NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_by_scope ON receipts (scope, id);
