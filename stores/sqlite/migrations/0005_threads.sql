-- reactguard durable state, version 5: conversations (threadstore.Store).
-- A thread belongs to an owner and holds its turns in order. The run that
-- holds a thread is run; holder is the owner id (lock file name) of the
-- process whose lease token holds it, '' when the thread is free or parked
-- on a stopped run. Turns and the summary are sealed by the loop: opaque
-- BLOBs here. A thread's evidence sits in the evidence tables under a key
-- that starts with the byte 0xFF (threadstore.Key), which no run id has.
CREATE TABLE reactguard_threads (
	id         BLOB PRIMARY KEY,
	tenant     BLOB NOT NULL,
	user_id    BLOB NOT NULL,
	turns      INTEGER NOT NULL DEFAULT 0,
	run        BLOB NOT NULL DEFAULT x'',
	holder     TEXT NOT NULL DEFAULT '',
	token      TEXT NOT NULL DEFAULT '',
	summary    BLOB,
	summarized INTEGER NOT NULL DEFAULT 0,
	created    INTEGER NOT NULL,
	updated    INTEGER NOT NULL
);
CREATE INDEX reactguard_threads_updated ON reactguard_threads (updated);

CREATE TABLE reactguard_thread_turns (
	thread  BLOB NOT NULL,
	idx     INTEGER NOT NULL,
	run     BLOB NOT NULL,
	tokens  INTEGER NOT NULL,
	content BLOB NOT NULL,
	at      INTEGER NOT NULL,
	PRIMARY KEY (thread, idx)
) WITHOUT ROWID;
