-- reactguard durable state, version 5: conversations (threadstore.Store).
-- A thread belongs to an owner and holds its turns in order. The run that
-- holds a thread is run; holder is the owner id of the Store lease of the
-- process whose lease token holds it, 0 when the thread is free or parked
-- on a stopped run. Turns and the summary are sealed by the loop: opaque
-- bytes here. A thread's evidence sits in the evidence tables under a key
-- that starts with the byte 0xFF (threadstore.Key), which no run id has.
CREATE TABLE reactguard_threads (
	id         bytea PRIMARY KEY,
	tenant     bytea NOT NULL,
	user_id    bytea NOT NULL,
	turns      integer NOT NULL DEFAULT 0,
	run        bytea NOT NULL DEFAULT '\x',
	holder     bigint NOT NULL DEFAULT 0,
	token      text NOT NULL DEFAULT '',
	summary    bytea,
	summarized integer NOT NULL DEFAULT 0,
	created    timestamptz NOT NULL,
	updated    timestamptz NOT NULL
);
CREATE INDEX reactguard_threads_updated ON reactguard_threads (updated);

CREATE TABLE reactguard_thread_turns (
	thread  bytea NOT NULL,
	idx     integer NOT NULL,
	run     bytea NOT NULL,
	tokens  bigint NOT NULL,
	content bytea NOT NULL,
	at      timestamptz NOT NULL,
	PRIMARY KEY (thread, idx)
);
