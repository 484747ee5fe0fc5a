"""A real OpenID Connect provider for the sign-in tests: django-oauth-toolkit in OIDC mode,
run as its own process with its own SQLite file (tests/test_sign_in_oidc.py starts it)."""
