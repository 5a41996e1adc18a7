-- The transactional outbox (schema version 2 of the orders set): one message per paid order,
-- written in the same fenced commit as the order's settlement and the saved answer, so a
-- message exists if and only if its order was paid. The relay (src/checkout/outbox/relay.rs)
-- reads unsent rows in id order and sets sent_at once the consumer acknowledged one; a row
-- whose sent_at is NULL is delivered again at the next pass, whatever happened before.
CREATE TABLE IF NOT EXISTS outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT    NOT NULL,
    message_id  TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL,
    payload     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    sent_at     INTEGER
);
CREATE INDEX IF NOT EXISTS outbox_unsent ON outbox (id) WHERE sent_at IS NULL;
