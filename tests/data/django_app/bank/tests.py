import threading

from django.db import IntegrityError, connection, transaction
from django.test import TestCase, TransactionTestCase

from .models import Account, Transfer
from .services import deposit


class DepositTests(TestCase):
    @classmethod
    def setUpTestData(cls):
        cls.alice = Account.objects.create(owner="alice", balance=100)

    def test_deposit_adds_to_the_balance_and_logs_it(self):
        self.assertEqual(deposit(self.alice.pk, 10, "salary"), 110)
        self.alice.refresh_from_db()
        self.assertEqual(self.alice.balance, 110)
        self.assertEqual(list(self.alice.transfers.values_list("amount", flat=True)), [10])

    def test_a_duplicate_key_rolls_back_to_the_savepoint(self):
        with self.assertRaises(IntegrityError), transaction.atomic():
            Account.objects.create(pk=self.alice.pk, owner="carol")
        self.assertEqual(Account.objects.count(), 1)

    def test_iterating_reads_through_a_server_side_cursor(self):
        # In the test's transaction: a cursor WITHOUT HOLD, fetched a row at a time.
        Account.objects.create(owner="dave", balance=5)
        owners = [a.owner for a in Account.objects.order_by("owner").iterator(chunk_size=1)]
        self.assertEqual(owners, ["alice", "dave"])

    def test_views(self):
        response = self.client.post(f"/accounts/{self.alice.pk}/deposit", {"amount": "5"})
        self.assertEqual(response.json(), {"balance": 105})
        response = self.client.get(f"/accounts/{self.alice.pk}")
        self.assertEqual(response.json(), {"owner": "alice", "balance": 105})
        self.assertEqual(self.client.get("/accounts/999").status_code, 404)


class TwoTellersTests(TransactionTestCase):
    """Two tellers deposit into one account, each on its own connection (Django gives each
    thread one), one after the other."""

    def test_two_deposits_both_count(self):
        bob = Account.objects.create(owner="bob", balance=100)

        def teller(amount):
            try:
                deposit(bob.pk, amount, f"teller {amount}")
            finally:
                connection.close()

        for amount in (10, 20):
            worker = threading.Thread(target=teller, args=(amount,))
            worker.start()
            worker.join()
        bob.refresh_from_db()
        self.assertEqual(bob.balance, 130)
        # In autocommit: a cursor declared WITH HOLD outside a transaction block.
        owners = [a.owner for a in Account.objects.filter(pk=bob.pk).iterator(chunk_size=1)]
        self.assertEqual(owners, ["bob"])
        self.assertEqual(Transfer.objects.filter(account=bob).count(), 2)
