-- reactguard durable state, version 3: runs have owners, the inbox reads
-- what a run waits for from its sealed snapshot only (the unsealed copies of
-- the pending call and the question are dropped), and every decision a
-- person makes is kept in an append-only audit record.
ALTER TABLE reactguard_runs ADD COLUMN tenant BLOB NOT NULL DEFAULT x'';
ALTER TABLE reactguard_runs ADD COLUMN user_id BLOB NOT NULL DEFAULT x'';
ALTER TABLE reactguard_runs DROP COLUMN tool;
ALTER TABLE reactguard_runs DROP COLUMN args;
ALTER TABLE reactguard_runs DROP COLUMN reason;
ALTER TABLE reactguard_runs DROP COLUMN question;
CREATE INDEX reactguard_runs_tenant ON reactguard_runs (tenant, stopped, id);
CREATE INDEX reactguard_runs_tenant_user ON reactguard_runs (tenant, user_id, stopped, id);

-- Decisions (runstore.Audit): one per decided suspension, in the order
-- recorded. Never updated or deleted by the library.
CREATE TABLE reactguard_audit (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	run         BLOB NOT NULL,
	suspension  BLOB NOT NULL,
	kind        INTEGER NOT NULL,
	call_id     BLOB NOT NULL,
	tool        BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	tenant      BLOB NOT NULL,
	user_id     BLOB NOT NULL,
	decided_by  BLOB NOT NULL,
	at          INTEGER NOT NULL,
	reason      BLOB NOT NULL,
	UNIQUE (run, suspension)
);
CREATE INDEX reactguard_audit_run_seq ON reactguard_audit (run, seq);
