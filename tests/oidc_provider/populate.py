"""Fill the test provider's database: ``python -m tests.oidc_provider.populate COMMAND ...``

``client ID SECRET REDIRECT_URI LOGOUT_URI``: a confidential client for the authorization-code flow,
RS256-signed ID tokens, no consent page (as a company provider configures its own apps).
``user NAME PASSWORD EMAIL [GROUP ...]``: create the user or reset its password and groups.
"""

from __future__ import annotations

import sys

import django


def main(argv: list[str]) -> None:
    django.setup()
    from django.contrib.auth.models import Group, User
    from oauth2_provider.models import Application

    command, *args = argv
    if command == "client":
        client_id, secret, redirect_uri, logout_uri = args
        Application.objects.filter(client_id=client_id).delete()
        Application.objects.create(
            name="PerfHub",
            client_id=client_id,
            client_secret=secret,  # hashed on save
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris=redirect_uri,
            post_logout_redirect_uris=logout_uri,
            algorithm=Application.RS256_ALGORITHM,
            skip_authorization=True,
        )
    elif command == "user":
        name, password, email, *groups = args
        user, _ = User.objects.get_or_create(username=name)
        user.email, user.first_name, user.last_name = email, name.title(), "Example"
        user.set_password(password)
        user.save()
        user.groups.set(Group.objects.get_or_create(name=g)[0] for g in groups)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
