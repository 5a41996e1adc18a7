-- The example checkout's business table (see sqlite.sql for why it looks like this).
CREATE TABLE IF NOT EXISTS orders (
    id          BIGSERIAL PRIMARY KEY,
    scope       TEXT   NOT NULL,
    idem_key    TEXT   NOT NULL,
    cart        TEXT   NOT NULL,
    amount      BIGINT NOT NULL,
    card        TEXT   NOT NULL,
    status      TEXT   NOT NULL CHECK (status IN ('pending', 'paid', 'declined')),
    charge_id   TEXT,
    created_at  BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_scope ON orders (scope, id);
