UPDATE acct SET bal = bal + 10 WHERE id = 1 RETURNING bal \gset
\echo :bal
