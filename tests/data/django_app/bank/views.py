from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from .models import Account
from .services import deposit


def balance_view(request, account_id):
    account = get_object_or_404(Account, pk=account_id)
    return JsonResponse({"owner": account.owner, "balance": account.balance})


@csrf_exempt
@require_POST
def deposit_view(request, account_id):
    balance = deposit(account_id, int(request.POST["amount"]), request.POST.get("note", ""))
    return JsonResponse({"balance": balance})
