-- reactguard durable state, version 3: runs have owners, the inbox reads
-- what a run waits for from its sealed snapshot only (the unsealed copies of
-- the pending call and the question are dropped), and every decision a
-- person makes is kept in an append-only audit record.
ALTER TABLE reactguard_runs ADD COLUMN tenant bytea NOT NULL DEFAULT '\x';
ALTER TABLE reactguard_runs ADD COLUMN user_id bytea NOT NULL DEFAULT '\x';
ALTER TABLE reactguard_runs DROP COLUMN tool;
ALTER TABLE reactguard_runs DROP COLUMN args;
ALTER TABLE reactguard_runs DROP COLUMN reason;
ALTER TABLE reactguard_runs DROP COLUMN question;
CREATE INDEX reactguard_runs_tenant ON reactguard_runs (tenant, stopped, id);
CREATE INDEX reactguard_runs_tenant_user ON reactguard_runs (tenant, user_id, stopped, id);

-- Decisions (runstore.Audit): one per decided suspension, in the order
-- recorded. Never updated or deleted by the library.
CREATE TABLE reactguard_audit (
	seq         bigint GENERATED ALWAYS AS IDENTITY,
	run         bytea NOT NULL,
	suspension  bytea NOT NULL,
	kind        smallint NOT NULL,
	call_id     bytea NOT NULL,
	tool        bytea NOT NULL,
	fingerprint bytea NOT NULL,
	tenant      bytea NOT NULL,
	user_id     bytea NOT NULL,
	decided_by  bytea NOT NULL,
	at          timestamptz NOT NULL,
	reason      bytea NOT NULL,
	PRIMARY KEY (run, suspension)
);
CREATE INDEX reactguard_audit_run_seq ON reactguard_audit (run, seq);
