-- reactguard durable state, version 3: reserved for the owners and the
-- decision audit (issue 18), which are merged from another branch. This
-- placeholder changes nothing; it is replaced by that migration.
SELECT 1;
