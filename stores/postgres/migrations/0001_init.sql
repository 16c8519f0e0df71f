-- reactguard durable state, version 1. Every string that a model, a user or
-- a host may fill is bytea: PostgreSQL text refuses NUL bytes, and a call id
-- or a question from a model may hold one. Times are timestamptz (to the
-- microsecond). Tables are unqualified: they go to the first schema of the
-- connection's search_path.

-- Approvals (guard.Approvals): the call waiting per run, the decisions per
-- gated call, the executions granted and not consumed per fingerprint.
CREATE TABLE reactguard_gated (
	run         bytea PRIMARY KEY,
	call_id     bytea NOT NULL,
	tool        bytea NOT NULL,
	args        bytea,
	fingerprint bytea NOT NULL,
	round       integer NOT NULL,
	at          timestamptz NOT NULL
);
CREATE INDEX reactguard_gated_at ON reactguard_gated (at);

CREATE TABLE reactguard_decisions (
	run         bytea NOT NULL,
	call_id     bytea NOT NULL,
	fingerprint bytea NOT NULL,
	approved    boolean NOT NULL,
	at          timestamptz NOT NULL,
	PRIMARY KEY (run, call_id)
);
CREATE INDEX reactguard_decisions_at ON reactguard_decisions (at);

CREATE TABLE reactguard_grants (
	run         bytea NOT NULL,
	fingerprint bytea NOT NULL,
	n           integer NOT NULL CHECK (n >= 0),
	at          timestamptz NOT NULL,
	PRIMARY KEY (run, fingerprint)
);
CREATE INDEX reactguard_grants_at ON reactguard_grants (at);

-- Write ledger (guard.WriteLedger). A running write names its owner: the
-- session-level advisory lock that the owning process holds on its own
-- connection for as long as it lives.
CREATE TABLE reactguard_writes (
	key    bytea PRIMARY KEY,
	tool   bytea NOT NULL,
	state  smallint NOT NULL,
	result bytea,
	code   integer NOT NULL DEFAULT 0,
	owner  bigint,
	at     timestamptz NOT NULL
);
CREATE INDEX reactguard_writes_at ON reactguard_writes (at);

-- Evidence (evidence.Ledger): records in append order, and index rows that
-- answer every lookup with one primary-key probe.
CREATE TABLE reactguard_records (
	seq         bigint GENERATED ALWAYS AS IDENTITY,
	run         bytea NOT NULL,
	call_id     bytea NOT NULL,
	attempt     integer NOT NULL,
	tool        bytea NOT NULL,
	fingerprint bytea NOT NULL,
	outcome     smallint NOT NULL,
	code        integer NOT NULL,
	payload     bytea,
	payload_ref bytea NOT NULL,
	round       integer NOT NULL,
	PRIMARY KEY (run, call_id, attempt)
);
CREATE INDEX reactguard_records_seq ON reactguard_records (run, seq);

-- One row per indexed fact of a run's successful records: a tool that
-- succeeded, a (tool, path, text) leaf, a text or word at any path. h is a
-- 16-byte hash of the fact, so long texts index as well as short ones.
CREATE TABLE reactguard_facts (
	run bytea NOT NULL,
	h   bytea NOT NULL,
	PRIMARY KEY (run, h)
);

-- Distinct calls per fingerprint, and the latest record of each.
CREATE TABLE reactguard_print_calls (
	run         bytea NOT NULL,
	fingerprint bytea NOT NULL,
	call_id     bytea NOT NULL,
	PRIMARY KEY (run, fingerprint, call_id)
);
CREATE TABLE reactguard_prints (
	run         bytea NOT NULL,
	fingerprint bytea NOT NULL,
	calls       integer NOT NULL,
	last_seq    bigint NOT NULL,
	PRIMARY KEY (run, fingerprint)
);

CREATE TABLE reactguard_user_texts (
	seq  bigint GENERATED ALWAYS AS IDENTITY,
	run  bytea NOT NULL,
	text bytea NOT NULL,
	PRIMARY KEY (run, seq)
);

-- When each run's evidence was last written: retention prunes by it.
CREATE TABLE reactguard_evidence_runs (
	run bytea PRIMARY KEY,
	at  timestamptz NOT NULL
);
CREATE INDEX reactguard_evidence_runs_at ON reactguard_evidence_runs (at);

-- Resume claims (runstore.Claims).
CREATE TABLE reactguard_claims (
	run   bytea NOT NULL,
	id    bytea NOT NULL,
	owner bigint NOT NULL,
	at    timestamptz NOT NULL,
	PRIMARY KEY (run, id)
);
CREATE INDEX reactguard_claims_at ON reactguard_claims (at);

-- Stopped runs (runstore.Store), listed oldest first by (stopped, id).
CREATE TABLE reactguard_runs (
	id       bytea PRIMARY KEY,
	node     bytea NOT NULL,
	kind     smallint NOT NULL,
	tool     bytea NOT NULL,
	args     bytea,
	reason   bytea NOT NULL,
	question bytea NOT NULL,
	snapshot bytea NOT NULL,
	stopped  timestamptz NOT NULL
);
CREATE INDEX reactguard_runs_stopped ON reactguard_runs (stopped, id);
CREATE INDEX reactguard_runs_node ON reactguard_runs (node, stopped, id);
CREATE INDEX reactguard_runs_kind ON reactguard_runs (kind, stopped, id);
CREATE INDEX reactguard_runs_node_kind ON reactguard_runs (node, kind, stopped, id);
