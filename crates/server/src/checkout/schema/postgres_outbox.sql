-- The transactional outbox (see sqlite_outbox.sql for why it looks like this).
CREATE TABLE IF NOT EXISTS outbox (
    id          BIGSERIAL PRIMARY KEY,
    scope       TEXT   NOT NULL,
    message_id  TEXT   NOT NULL UNIQUE,
    kind        TEXT   NOT NULL,
    payload     TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    sent_at     BIGINT
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
