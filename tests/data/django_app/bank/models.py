from django.db import models


class Account(models.Model):
    owner = models.CharField(max_length=100, unique=True)
    balance = models.IntegerField(default=0)


class Transfer(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="transfers")
    amount = models.IntegerField()
    note = models.CharField(max_length=200, blank=True, db_index=True)
