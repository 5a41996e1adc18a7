-- The example checkout's business table. The order is the checkout's recovery point: it is
-- written in the claim's own transaction, before PayCo is called, and its id is saved as the
-- claim's recovery point, so after a takeover or a released claim every worker of the same
-- request resumes it and charges PayCo under the same key, charge:<id>.
CREATE TABLE IF NOT EXISTS orders (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT    NOT NULL,
    idem_key    TEXT    NOT NULL,
    cart        TEXT    NOT NULL,
    amount      INTEGER NOT NULL,
    card        TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'paid', 'declined')),
    charge_id   TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_by_scope ON orders (scope, id);
