-- The receipts service's one table: a receipt sent to the customer per order.paid message.
-- No constraint makes a receipt unique per order: a receipt stands for an effect that cannot
-- be undone or deduplicated by the database it is recorded in (an email sent). Once per
-- message comes from process_once alone (idem_messages, the same transaction), which the
-- outbox tests check.
CREATE TABLE IF NOT EXISTS receipts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT    NOT NULL,
    message_id  TEXT    NOT NULL,
    order_id    INTEGER NOT NULL,
    amount      INTEGER NOT NULL,
    charge_id   TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS receipts_by_scope ON receipts (scope, id);
