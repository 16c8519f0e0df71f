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
ALTER TABLE reactguard_claims ADD COLUMN token bigint NOT NULL DEFAULT 0;
