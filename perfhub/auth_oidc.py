"""OpenID Connect sign-in (mozilla-django-oidc), used only when PERFHUB_OIDC_CLIENT_ID is set.

Endpoints come from the provider's discovery document (``PERFHUB_OIDC_ISSUER``), fetched once
at the first sign-in rather than at start-up, so PerfHub starts while the provider is down;
an endpoint set explicitly wins over the discovered one. The groups claim is mapped to
PerfHub's roles at every sign-in (``perfhub.signin_roles``).
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import LoginView, LogoutView
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

from perfhub.signin_roles import sync_roles

log = logging.getLogger(__name__)

# mozilla-django-oidc setting -> key of the discovery document that supplies it when unset
_DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
    "OIDC_OP_LOGOUT_ENDPOINT": "end_session_endpoint",  # optional (RP-initiated logout)
}


@functools.cache
def discovery(issuer: str) -> dict[str, Any]:
    """The provider's ``/.well-known/openid-configuration`` (cached for the process)."""
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    response = requests.get(url, timeout=settings.OIDC_TIMEOUT)
    response.raise_for_status()
    document: dict[str, Any] = response.json()
    # OIDC Discovery 1.0, section 4.3: the document must name the issuer it was asked for
    if document.get("issuer", "").rstrip("/") != issuer.rstrip("/"):
        raise ImproperlyConfigured(f"{url} names issuer {document.get('issuer')!r}")
    return document


def oidc_setting(attr: str, *default: Any) -> Any:
    """A mozilla-django-oidc setting, endpoints filled from discovery when not set."""
    if attr in _DISCOVERED and not getattr(settings, attr, None):
        issuer = getattr(settings, "PERFHUB_OIDC_ISSUER", "")
        if issuer:
            if value := discovery(issuer).get(_DISCOVERED[attr]):
                return value
            if default:
                return default[0]
            raise ImproperlyConfigured(f"{issuer} names no {_DISCOVERED[attr]}: set {attr}")
    return import_from_settings(attr, *default)


# Seconds the clocks of PerfHub and the provider may disagree by
_CLOCK_SKEW_S = 60


def id_token_problem(payload: dict[str, Any], *, client_id: str, issuer: str, now: float) -> str:
    """Why the ID token's claims are not for this sign-in ("" when they are).

    mozilla-django-oidc checks the signature and the nonce; OIDC Core 3.1.3.7 also asks the
    client to check who issued the token, that it was issued to this client, and that it is
    not expired.
    """
    audience = payload.get("aud")
    audiences = [audience] if isinstance(audience, str) else list(audience or [])
    if client_id not in audiences:
        return f"audience {audience!r} is not this client"
    if len(audiences) > 1 and payload.get("azp") != client_id:
        return "several audiences and no azp naming this client"
    if issuer and str(payload.get("iss", "")).rstrip("/") != issuer.rstrip("/"):
        return f"issuer {payload.get('iss')!r} is not {issuer!r}"
    expires = payload.get("exp")
    if not isinstance(expires, int | float) or expires < now - _CLOCK_SKEW_S:
        return "expired"
    return ""


class PerfHubOIDCBackend(OIDCAuthenticationBackend):
    """Users are matched by the username claim, and their groups claim sets their roles."""

    get_settings = staticmethod(oidc_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Django builds every backend for every sign-in, password ones too: the provider's
        # endpoints (discovery, a network call) are read only when a code comes back, so a
        # provider that is down never slows or breaks local sign-ins.
        self.UserModel = get_user_model()

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if request is None or not (request.GET.get("code") and request.GET.get("state")):
            return None
        try:
            super().__init__()
        except requests.RequestException as exc:
            log.warning("OIDC sign-in failed: provider discovery: %s", exc)
            return None
        return super().authenticate(request, **kwargs)

    def verify_token(self, token: str, **kwargs: Any) -> Any:
        payload = super().verify_token(token, **kwargs)
        problem = id_token_problem(
            payload,
            client_id=self.OIDC_RP_CLIENT_ID,
            issuer=settings.PERFHUB_OIDC_ISSUER,
            now=time.time(),
        )
        if problem:
            log.warning("OIDC sign-in refused: ID token %s", problem)
            return None
        return payload

    def _username(self, claims: dict[str, Any]) -> str:
        return str(claims.get(settings.PERFHUB_OIDC_USERNAME_CLAIM) or "").strip()

    def _groups(self, claims: dict[str, Any]) -> list[str]:
        groups = claims.get(settings.PERFHUB_OIDC_GROUPS_CLAIM) or []
        # some providers send one group as a plain string
        return [groups] if isinstance(groups, str) else [g for g in groups if isinstance(g, str)]

    def describe_user_by_claims(self, claims: dict[str, Any]) -> str:
        return f"username {self._username(claims)!r}"

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        if not self._username(claims):
            log.warning("OIDC sign-in refused: no %r claim", settings.PERFHUB_OIDC_USERNAME_CLAIM)
            return False
        if settings.PERFHUB_OIDC_REQUIRE_ROLE:
            role_map = settings.PERFHUB_OIDC_ROLE_MAP
            if not any(g.lower() in role_map for g in self._groups(claims)):
                log.info(
                    "OIDC sign-in refused: %s has no group with a role", self._username(claims)
                )
                return False
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        # by user name, not e-mail: addresses change and are shared by aliases
        return self.UserModel.objects.filter(username__iexact=self._username(claims))

    def create_user(self, claims: dict[str, Any]) -> Any:
        user = self.UserModel.objects.create_user(
            self._username(claims), email=claims.get("email") or ""
        )
        return self.update_user(user, claims)

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        changed = False
        for field, claim in (
            ("email", "email"),
            ("first_name", "given_name"),
            ("last_name", "family_name"),
        ):
            value = claims.get(claim)
            if isinstance(value, str) and value and getattr(user, field) != value:
                setattr(user, field, value[:150])
                changed = True
        if changed:
            user.save()
        sync_roles(user, self._groups(claims), settings.PERFHUB_OIDC_ROLE_MAP)
        return user


class _RequestView(OIDCAuthenticationRequestView):
    get_settings = staticmethod(oidc_setting)


class _CallbackView(OIDCAuthenticationCallbackView):
    get_settings = staticmethod(oidc_setting)


def _only_when_configured(view: Any) -> Any:
    """The view when OIDC is configured, else 404; always reachable before signing in."""

    @login_not_required
    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.PERFHUB_OIDC_ENABLED:
            raise Http404("OpenID Connect sign-in is not configured")
        try:
            return view(request, *args, **kwargs)
        except requests.RequestException as exc:
            # the provider (or its discovery document) is down: say so, keep the form usable
            log.warning("OIDC sign-in: provider unreachable: %s", exc)
            return HttpResponseRedirect(f"{resolve_url(settings.LOGIN_URL)}?signin=unreachable")

    return wrapped


authenticate_view = _only_when_configured(_RequestView.as_view())
callback_view = _only_when_configured(_CallbackView.as_view())


class SignInView(LoginView):
    """Django's login form, with the "Sign in with ..." button when OIDC is configured."""

    template_name = "account/login.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["oidc_name"] = settings.PERFHUB_OIDC_NAME if settings.PERFHUB_OIDC_ENABLED else ""
        context["signin_problem"] = self.request.GET.get("signin", "")
        return context


def provider_logout_url(request: HttpRequest) -> str:
    """The provider's end-session URL for someone who signed in through it, else "".

    Signing out of PerfHub alone would leave the provider's session open, and the next
    "Sign in with ..." would let the same person straight back in (RP-Initiated Logout 1.0).
    Local and LDAP users never cause a call to the provider.
    """
    backend = f"{PerfHubOIDCBackend.__module__}.{PerfHubOIDCBackend.__qualname__}"
    id_token = request.session.get("oidc_id_token")
    if not (settings.PERFHUB_OIDC_ENABLED and settings.PERFHUB_OIDC_PROVIDER_LOGOUT):
        return ""
    if not id_token or request.session.get(BACKEND_SESSION_KEY) != backend:
        return ""
    try:
        end_session = oidc_setting("OIDC_OP_LOGOUT_ENDPOINT", "")
    except requests.RequestException as exc:
        log.warning("OIDC sign-out at the provider skipped: discovery: %s", exc)
        return ""
    if not end_session:
        return ""
    back = request.build_absolute_uri(resolve_url(settings.LOGOUT_REDIRECT_URL))
    query = {
        "id_token_hint": id_token,
        "client_id": settings.OIDC_RP_CLIENT_ID,
        "post_logout_redirect_uri": back,
    }
    return f"{end_session}{'&' if '?' in end_session else '?'}{urlencode(query)}"


class SignOutView(LogoutView):
    """Django's sign-out, then the provider's for users who signed in through it."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        at_provider = provider_logout_url(request)  # read before the session is flushed
        response = super().post(request, *args, **kwargs)
        return HttpResponseRedirect(at_provider) if at_provider else response
