-- reactguard durable state, version 4: fencing tokens, and the run of a write. Every claim of a
-- write or of a resume draws its token from one counter: a later claim
-- always holds a larger token. Records that close a claim name its token
-- and are refused once another claim took it.
CREATE TABLE reactguard_fence (n INTEGER NOT NULL);
INSERT INTO reactguard_fence (n) VALUES (0);
ALTER TABLE reactguard_writes ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
-- The run whose approved write a key is (NULL for writes claimed without
-- an approval): retention keeps the keys of runs it keeps.
ALTER TABLE reactguard_writes ADD COLUMN run BLOB;
ALTER TABLE reactguard_claims ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
