#!/usr/bin/env python3
"""Emit isopredict's JSON-lines event format from an application of your own (docs/recording.md).

A toy bank kept in memory stands in for your database: every row carries the id of the
transaction that wrote it (a "writer column"), so each read can say which transaction's write
it saw. Two sessions run read-modify-write deposits; session "b" runs its transactions
interleaved with session "a"'s the way a read-committed database allows, so one deposit is lost.

    python3 examples/emit_events.py > bank.jsonl
    isopredict check bank.jsonl --level rc     # consistent: read committed allows this
    isopredict predict bank.jsonl --level rc   # exit 1: an unserializable execution (this one)
"""
import json
import sys

rows = {"acct1": (100, "initial")}  # key -> (value, writer transaction)
out = sys.stdout


def emit(**event):
    out.write(json.dumps(event, separators=(",", ":")) + "\n")


class Txn:
    def __init__(self, session, txn):
        self.session, self.txn, self.writes = session, txn, {}
        emit(event="begin", session=session, txn=txn)

    def read(self, key):
        value, writer = self.writes.get(key, (None, None))
        if writer is None:
            value, writer = rows[key]
        else:
            writer = self.txn  # reads its own write
        emit(event="read", session=self.session, txn=self.txn, key=key, value=value, writer=writer)
        return value

    def write(self, key, value):
        self.writes[key] = (value, self.txn)
        emit(event="write", session=self.session, txn=self.txn, key=key, value=value)

    def commit(self):
        rows.update(self.writes)
        emit(event="commit", session=self.session, txn=self.txn)

    def abort(self):
        emit(event="abort", session=self.session, txn=self.txn)


# a1 and b1 both read the initial balance; both write; b1's write overwrites a1's.
a1, b1 = Txn("a", "a1"), Txn("b", "b1")
bal_a = a1.read("acct1")
bal_b = b1.read("acct1")
a1.write("acct1", bal_a + 10)
a1.commit()
b1.write("acct1", bal_b + 20)
b1.commit()
# a2 reads b1's write; b2 is rolled back by the application.
a2 = Txn("a", "a2")
a2.read("acct1")
a2.commit()
b2 = Txn("b", "b2")
b2.write("acct1", b2.read("acct1") - 500)
b2.abort()
