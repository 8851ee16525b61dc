from django.urls import path

from bank import views

urlpatterns = [
    path("accounts/<int:account_id>/deposit", views.deposit_view),
    path("accounts/<int:account_id>", views.balance_view),
]
