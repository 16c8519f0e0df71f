-- reactguard durable state, version 6: an evidence record carries its
-- provenance — when the result was fetched, from where, the object and its
-- data version, a write's business voucher and idempotency key
-- (evidence.Provenance). The columns are NULL in records written before
-- (they read without provenance). Texts are bytea, as every string a tool
-- may fill; the fetch time is to the microsecond, as evidence.Provenance.Clean
-- keeps it.
ALTER TABLE reactguard_records ADD COLUMN fetched_at timestamptz;
ALTER TABLE reactguard_records ADD COLUMN source bytea;
ALTER TABLE reactguard_records ADD COLUMN object_id bytea;
ALTER TABLE reactguard_records ADD COLUMN version bytea;
ALTER TABLE reactguard_records ADD COLUMN voucher bytea;
ALTER TABLE reactguard_records ADD COLUMN idempotency_key bytea;
