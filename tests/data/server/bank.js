// A small node-postgres program (tests/server.rs records it with `isopredict record`): a
// fixture connection named `setup:fixture` loads two accounts, then two tellers each add to
// account 1 with parameterised queries (node-postgres sends them with the extended protocol:
// Parse/Bind/Execute). `deposit`: each reads the balance into JavaScript and writes back the
// sum it computed (one deposit can be lost at read committed). `increment`: each adds in SQL,
// `UPDATE … SET bal = bal + $1 … RETURNING bal` (atomic on every real database). Prints the
// balance each teller left (no read after the tellers': at read committed a later read could
// miss a write, which is not what this program is about).
const { Client } = require('pg');

async function main() {
  const mode = process.argv[2];
  const setup = new Client({ application_name: 'setup:fixture' });
  await setup.connect();
  await setup.query('CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL)');
  await setup.query('INSERT INTO acct (id, bal) VALUES ($1, $2), ($3, $4)', [1, 100, 2, 50]);
  await setup.end();
  const tellers = [new Client({ application_name: 'teller-1' }),
                   new Client({ application_name: 'teller-2' })];
  for (const c of tellers) await c.connect();
  for (const [c, amount] of [[tellers[0], 10], [tellers[1], 20]]) {
    let bal;
    if (mode === 'deposit') {
      await c.query('BEGIN');
      const r = await c.query('SELECT bal FROM acct WHERE id = $1', [1]);
      bal = r.rows[0].bal + amount;
      await c.query('UPDATE acct SET bal = $1 WHERE id = $2', [bal, 1]);
      await c.query('COMMIT');
    } else {
      const r = await c.query('UPDATE acct SET bal = bal + $1 WHERE id = $2 RETURNING bal',
                              [amount, 1]);
      bal = r.rows[0].bal;
    }
    console.log(`balance ${bal}`);
  }
  for (const c of tellers) await c.end();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
