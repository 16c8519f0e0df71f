-- reactguard durable state, version 7: an evidence record is one row and
-- its primary key. The GIN index of the records' fact hashes and the
-- (run, fingerprint, seq) index are dropped: every append wrote an entry in
-- both, more than the row itself (a tool result of n leaves wrote about 3n
-- GIN entries), while a run's lookups are answered from the loop's
-- evidence cache, and the lookups of a ledger used without one read the
-- run's records through the primary key. New records leave facts NULL; the
-- hashes of records written before stay, and are still read.
DROP INDEX IF EXISTS reactguard_records_facts;
DROP INDEX IF EXISTS reactguard_records_prints;
