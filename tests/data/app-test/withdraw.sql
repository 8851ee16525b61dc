BEGIN;
SELECT bal, bal >= 60 AS enough FROM acct WHERE id = 1 \gset
\if :enough
UPDATE acct SET bal = :bal - 60 WHERE id = 1;
\else
UPDATE acct SET bal = :bal, declined = true WHERE id = 1;
\endif
COMMIT;
