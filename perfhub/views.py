"""Account pages: login is Django's own view with our template; token management here."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token


@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """Create, rotate or revoke the signed-in user's API token.

    The key is shown in full only right after it is created, like a password.
    """
    token = Token.objects.filter(user=request.user).first()
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action in {"create", "rotate"}:
            if token:
                token.delete()
            token = Token.objects.create(user=request.user)
            new_key = token.key
            messages.success(request, "New API token created. Copy it now: it is shown once.")
        elif action == "revoke" and token:
            token.delete()
            token = None
            messages.success(request, "API token revoked.")
        if new_key is None:
            return redirect("api-token")
    return render(
        request,
        "account/token.html",
        {"token": token, "new_key": new_key, "base_url": request.build_absolute_uri("/")},
    )
