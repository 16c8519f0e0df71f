-- reactguard durable state, version 4: fencing tokens. Every claim of a
-- write or of a resume draws its token from one counter: a later claim
-- always holds a larger token. Records that close a claim name its token
-- and are refused once another claim took it.
CREATE TABLE reactguard_fence (n INTEGER NOT NULL);
INSERT INTO reactguard_fence (n) VALUES (0);
ALTER TABLE reactguard_writes ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reactguard_claims ADD COLUMN token INTEGER NOT NULL DEFAULT 0;
