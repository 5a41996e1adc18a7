-- Messages a consumer has processed (PostgreSQL): a row is written in the same transaction as
-- the message's effect, so "processed" and "effect happened" commit together.
CREATE TABLE idem_messages (
    scope        TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    processed_at BIGINT  NOT NULL,
    expires_at   BIGINT  NOT NULL,
    PRIMARY KEY (scope, message_id)
);

CREATE INDEX idem_messages_expires_at ON idem_messages (expires_at);
