-- reactguard durable state, version 6: an evidence record carries its
-- provenance — when the result was fetched (Unix microseconds, as
-- evidence.Provenance.Clean keeps it), from where, the object and its data
-- version, a write's business voucher and idempotency key
-- (evidence.Provenance). The columns are NULL in records written before
-- (they read without provenance).
ALTER TABLE reactguard_records ADD COLUMN fetched_us INTEGER;
ALTER TABLE reactguard_records ADD COLUMN source BLOB;
ALTER TABLE reactguard_records ADD COLUMN object_id BLOB;
ALTER TABLE reactguard_records ADD COLUMN version BLOB;
ALTER TABLE reactguard_records ADD COLUMN voucher BLOB;
ALTER TABLE reactguard_records ADD COLUMN idempotency_key BLOB;
