-- reactguard durable state, version 4: leases and fencing tokens.
--
-- A running write and a resume claim name their owner: a process's Store,
-- by a random 63-bit id whose lease row it renews while it lives. Another
-- process takes the claim over (a write reads as uncertain, an unsettled
-- resume claim is given to the next resume) only once the lease has
-- expired by the database's clock; the owner counts its lease lost
-- earlier, on its own clock, and stops. Up to version 2 the owner was a
-- session-level advisory lock, which a dead session frees while its
-- process may still be running.
--
-- Upgrading: the claims of version 2 name advisory-lock owners, which have
-- no lease row, so they read as ended: stop every process of the older
-- version before the first process of this version migrates.
CREATE TABLE reactguard_leases (
	owner   bigint PRIMARY KEY,
	expires timestamptz NOT NULL
);
CREATE INDEX reactguard_leases_expires ON reactguard_leases (expires);

-- Every claim of a write or of a resume draws its fencing token from one
-- sequence: a later claim always holds a larger token. Records that close
-- a claim name its token and are refused once another claim took it.
CREATE SEQUENCE reactguard_fence;
ALTER TABLE reactguard_writes ADD COLUMN token bigint NOT NULL DEFAULT 0;
-- The run whose approved write a key is (NULL for writes claimed without
-- an approval): retention keeps the keys of runs it keeps.
ALTER TABLE reactguard_writes ADD COLUMN run bytea;
-- A write's record is updated in place (claimed, then finished): with no
-- index on its time and room left in each page, the update is a HOT one
-- (no index entry). Retention scans the table instead (a periodic job).
DROP INDEX reactguard_writes_at;
ALTER TABLE reactguard_writes SET (fillfactor = 70);
ALTER TABLE reactguard_claims ADD COLUMN token bigint NOT NULL DEFAULT 0;

-- Evidence: a record keeps its own index. Its fact hashes, salted with the
-- run (so that one GIN index answers a run's lookups), are a column of the
-- record, and an index on (run, fingerprint, seq) answers the fingerprint
-- counts: an append writes one row where it wrote up to five tables.
-- Records of earlier versions keep their facts in reactguard_facts, which
-- lookups still read; the per-fingerprint tables are derived from the
-- records and dropped.
ALTER TABLE reactguard_records ADD COLUMN facts bytea[];
CREATE INDEX reactguard_records_facts ON reactguard_records USING gin (facts);
CREATE INDEX reactguard_records_prints ON reactguard_records (run, fingerprint, seq) WHERE fingerprint <> ''::bytea;
-- A run's records are read by the primary key's prefix (run) and sorted:
-- the (run, seq) index costs every append and saves nothing.
DROP INDEX reactguard_records_seq;
DROP TABLE reactguard_prints;
DROP TABLE reactguard_print_calls;
