-- reactguard durable state, version 2: a resume claim is settled once its
-- resume stopped after the user's decision applied (runstore.Claims.Settle).
-- A settled claim is final; a claim that is taken and not settled, whose
-- owner's lock file is free (its process died), is taken over by the next
-- resume of its snapshot. Claims of version 1 read as not settled.
ALTER TABLE reactguard_claims ADD COLUMN settled INTEGER NOT NULL DEFAULT 0;
