-- reactguard durable state, version 8: an approval is granted on the write
-- ledger's row of the key the write gate derives for the approved call
-- (guard.IdempotencyKey of the run and the call's fingerprint), so that the
-- approved write is claimed, and its approval consumed, by one in-place
-- update of one row (a HOT update: no indexed column changes) instead of an
-- insert into the ledger and an update of a grants row. A granted key that
-- was never claimed is a row in state 0 (none) with grants > 0. A write
-- claimed under another key (an explicit idempotency key) consumes the
-- grant of the derived key's row in the same statement that claims its own.
--
-- Upgrading: the grants of version 7 move to their keys' rows and the
-- grants table is dropped, so processes of an older version (whose
-- statements name it) fail until they are upgraded: stop them before the
-- first process of this version migrates.
ALTER TABLE reactguard_writes ADD COLUMN grants integer NOT NULL DEFAULT 0 CHECK (grants >= 0);

-- guard.IdempotencyKey: "rg-" and the hex of the first 16 bytes of the
-- SHA-256 of the run's length (uvarint), the run and the fingerprint.
CREATE FUNCTION pg_temp.reactguard_uvarint(n bigint) RETURNS bytea LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF n < 128 THEN
		RETURN set_byte('\x00'::bytea, 0, n::integer);
	END IF;
	RETURN set_byte('\x00'::bytea, 0, (n % 128 + 128)::integer) || pg_temp.reactguard_uvarint(n / 128);
END$$;

INSERT INTO reactguard_writes (key, tool, state, token, run, at, grants)
SELECT convert_to('rg-' || encode(substring(sha256(pg_temp.reactguard_uvarint(length(run)) || run || fingerprint) FROM 1 FOR 16), 'hex'), 'UTF8'),
	''::bytea, 0, 0, run, at, n
FROM reactguard_grants WHERE n > 0
ON CONFLICT (key) DO UPDATE SET grants = EXCLUDED.grants, run = coalesce(reactguard_writes.run, EXCLUDED.run),
	at = greatest(reactguard_writes.at, EXCLUDED.at);

DROP FUNCTION pg_temp.reactguard_uvarint(bigint);
DROP TABLE reactguard_grants;
