"""Two doctors on call (the write skew of Cahill, Röhm and Fekete, SIGMOD 2008), with psycopg 3:
each doctor goes off call only if the other one is still on call. The check reads both rows;
the update writes the doctor's own row (on_call stays true when nobody else is on call).

Run one after the other, as recorded, alice goes off call and bob, seeing her off, stays on.
Under snapshot isolation both checks can read the initial rows: both go off call. The program
exits 1 when nobody is on call at the end.
"""

import psycopg


def connect(name):
    # Connection settings come from PGHOST, PGPORT, PGUSER, PGDATABASE (isopredict test).
    return psycopg.connect("", application_name=name)


def setup():
    with connect("setup:fixture") as conn:
        with conn.transaction():
            conn.execute("DROP TABLE IF EXISTS doctors")
            conn.execute("CREATE TABLE doctors (id integer PRIMARY KEY, name text NOT NULL,"
                         " on_call boolean NOT NULL)")
            conn.execute("INSERT INTO doctors VALUES (1, 'alice', true), (2, 'bob', true)")


def go_off_call(conn, me):
    with conn.transaction():
        rows = conn.execute("SELECT id, on_call FROM doctors WHERE id IN (1, 2)").fetchall()
        others = sum(1 for (i, on) in rows if on and i != me)
        conn.execute("UPDATE doctors SET on_call = %s WHERE id = %s", (others == 0, me))


def on_call(conn):
    with conn.transaction():
        rows = conn.execute("SELECT on_call FROM doctors WHERE id IN (1, 2)").fetchall()
    return sum(1 for (on,) in rows if on)


if __name__ == "__main__":
    setup()
    with connect("alice") as alice, connect("bob") as bob:
        go_off_call(alice, 1)
        go_off_call(bob, 2)
    with connect("check") as check:
        raise SystemExit(0 if on_call(check) >= 1 else 1)
