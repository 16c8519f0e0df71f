-- reactguard durable state, version 1. Every string that a model, a user or
-- a host may fill is a BLOB, stored and compared byte for byte. Times are
-- integers: Unix microseconds, UTC.

-- Approvals (guard.Approvals): the call waiting per run, the decisions per
-- gated call, the executions granted and not consumed per fingerprint.
CREATE TABLE reactguard_gated (
	run         BLOB PRIMARY KEY,
	call_id     BLOB NOT NULL,
	tool        BLOB NOT NULL,
	args        BLOB,
	fingerprint BLOB NOT NULL,
	round       INTEGER NOT NULL,
	at          INTEGER NOT NULL
);
CREATE INDEX reactguard_gated_at ON reactguard_gated (at);

CREATE TABLE reactguard_decisions (
	run         BLOB NOT NULL,
	call_id     BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	approved    INTEGER NOT NULL,
	at          INTEGER NOT NULL,
	PRIMARY KEY (run, call_id)
);
CREATE INDEX reactguard_decisions_at ON reactguard_decisions (at);

CREATE TABLE reactguard_grants (
	run         BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	n           INTEGER NOT NULL CHECK (n >= 0),
	at          INTEGER NOT NULL,
	PRIMARY KEY (run, fingerprint)
);
CREATE INDEX reactguard_grants_at ON reactguard_grants (at);

-- Write ledger (guard.WriteLedger). A running write names its owner: the
-- process whose Store holds the lock file of that name.
CREATE TABLE reactguard_writes (
	key    BLOB PRIMARY KEY,
	tool   BLOB NOT NULL,
	state  INTEGER NOT NULL,
	result BLOB,
	code   INTEGER NOT NULL DEFAULT 0,
	owner  TEXT,
	at     INTEGER NOT NULL
);
CREATE INDEX reactguard_writes_at ON reactguard_writes (at);

-- Evidence (evidence.Ledger): records in append order, and index rows that
-- answer every lookup with one primary-key probe.
CREATE TABLE reactguard_records (
	seq         INTEGER PRIMARY KEY AUTOINCREMENT,
	run         BLOB NOT NULL,
	call_id     BLOB NOT NULL,
	attempt     INTEGER NOT NULL,
	tool        BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	outcome     INTEGER NOT NULL,
	code        INTEGER NOT NULL,
	payload     BLOB,
	payload_ref BLOB NOT NULL,
	round       INTEGER NOT NULL,
	UNIQUE (run, call_id, attempt)
);
CREATE INDEX reactguard_records_seq ON reactguard_records (run, seq);

-- One row per indexed fact of a run's successful records (see the
-- PostgreSQL store): h is a 16-byte hash of the fact.
CREATE TABLE reactguard_facts (
	run BLOB NOT NULL,
	h   BLOB NOT NULL,
	PRIMARY KEY (run, h)
) WITHOUT ROWID;

CREATE TABLE reactguard_print_calls (
	run         BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	call_id     BLOB NOT NULL,
	PRIMARY KEY (run, fingerprint, call_id)
) WITHOUT ROWID;
CREATE TABLE reactguard_prints (
	run         BLOB NOT NULL,
	fingerprint BLOB NOT NULL,
	calls       INTEGER NOT NULL,
	last_seq    INTEGER NOT NULL,
	PRIMARY KEY (run, fingerprint)
) WITHOUT ROWID;

CREATE TABLE reactguard_user_texts (
	seq  INTEGER PRIMARY KEY AUTOINCREMENT,
	run  BLOB NOT NULL,
	text BLOB NOT NULL
);
CREATE INDEX reactguard_user_texts_run ON reactguard_user_texts (run, seq);

CREATE TABLE reactguard_evidence_runs (
	run BLOB PRIMARY KEY,
	at  INTEGER NOT NULL
);
CREATE INDEX reactguard_evidence_runs_at ON reactguard_evidence_runs (at);

-- Resume claims (runstore.Claims).
CREATE TABLE reactguard_claims (
	run   BLOB NOT NULL,
	id    BLOB NOT NULL,
	owner TEXT NOT NULL,
	at    INTEGER NOT NULL,
	PRIMARY KEY (run, id)
);
CREATE INDEX reactguard_claims_at ON reactguard_claims (at);

-- Stopped runs (runstore.Store), listed oldest first by (stopped, id).
CREATE TABLE reactguard_runs (
	id       BLOB PRIMARY KEY,
	node     BLOB NOT NULL,
	kind     INTEGER NOT NULL,
	tool     BLOB NOT NULL,
	args     BLOB,
	reason   BLOB NOT NULL,
	question BLOB NOT NULL,
	snapshot BLOB NOT NULL,
	stopped  INTEGER NOT NULL
);
CREATE INDEX reactguard_runs_stopped ON reactguard_runs (stopped, id);
CREATE INDEX reactguard_runs_node ON reactguard_runs (node, stopped, id);
CREATE INDEX reactguard_runs_kind ON reactguard_runs (kind, stopped, id);
CREATE INDEX reactguard_runs_node_kind ON reactguard_runs (node, kind, stopped, id);
