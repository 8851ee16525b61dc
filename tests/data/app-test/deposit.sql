BEGIN;
SELECT bal FROM acct WHERE id = 1 \gset
UPDATE acct SET bal = :bal + 10 WHERE id = 1;
COMMIT;
SELECT bal FROM acct WHERE id = 1 \gset
\echo :bal
