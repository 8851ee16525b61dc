"""A tiny bank on PostgreSQL (psycopg 3): the example application of docs/recording.md.

deposit() reads the balance into Python and writes back the sum it computed: correct when
deposits run one at a time, but two concurrent deposits at read committed can both read the
old balance, and one of them is lost. transfer() does the arithmetic in SQL instead (an
atomic read-modify-write on every real database).
"""

import psycopg


def connect(name):
    # Connection settings come from PGHOST, PGPORT, PGUSER, PGDATABASE (isopredict record).
    return psycopg.connect("", application_name=name)


def setup(conn):
    with conn.transaction():
        conn.execute("DROP TABLE IF EXISTS acct")
        conn.execute("CREATE TABLE acct (id integer PRIMARY KEY, owner text NOT NULL,"
                     " bal integer NOT NULL)")
        conn.execute("INSERT INTO acct (id, owner, bal) VALUES (1, 'alice', 100), (2, 'bob', 50)")


def balance(conn, account):
    row = conn.execute("SELECT bal FROM acct WHERE id = %s", (account,)).fetchone()
    conn.commit()
    return row[0]


def deposit(conn, account, amount):
    with conn.transaction():
        (bal,) = conn.execute("SELECT bal FROM acct WHERE id = %s", (account,)).fetchone()
        conn.execute("UPDATE acct SET bal = %s WHERE id = %s", (bal + amount, account))


def transfer(conn, source, target, amount):
    with conn.transaction():
        conn.execute("UPDATE acct SET bal = bal - %s WHERE id = %s", (amount, source))
        conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (amount, target))
