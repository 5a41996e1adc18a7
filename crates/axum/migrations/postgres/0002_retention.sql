-- Retention per route (schema version 2, PostgreSQL; the same as ../sqlite/0002_retention.sql).
-- Each row keeps the retention its claiming route declared (else the store's default), fixed
-- at the claim; every later write sets expires_at = now + retention_ms
-- (idem_store::rules::expires_at). Rows written under version 1 were kept for the store's
-- default of the time, 24 h, which is what they read as.
ALTER TABLE idem_claims ADD COLUMN retention_ms BIGINT NOT NULL DEFAULT 86400000;
