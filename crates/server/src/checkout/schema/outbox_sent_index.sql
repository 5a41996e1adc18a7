-- Version 3 of the orders set: the relay deletes rows sent longer ago than it keeps them
-- (src/checkout/outbox/relay.rs, `keep_sent`), oldest first, a batch after each pass; this
-- index is what lets that read only the rows it deletes. Same text on SQLite and PostgreSQL.
CREATE INDEX IF NOT EXISTS outbox_sent ON outbox (sent_at) WHERE sent_at IS NOT NULL;
