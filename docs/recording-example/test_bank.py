"""The example application's test: it passes, run after run (see docs/recording.md)."""

import bank


def test_deposits_and_transfer():
    with bank.connect("setup:fixture") as conn:
        bank.setup(conn)
    with bank.connect("teller-1") as t1, bank.connect("teller-2") as t2:
        bank.deposit(t1, 1, 10)
        bank.deposit(t2, 1, 20)
        bank.transfer(t1, 1, 2, 30)
        assert bank.balance(t2, 1) == 100
        assert bank.balance(t2, 2) == 80
