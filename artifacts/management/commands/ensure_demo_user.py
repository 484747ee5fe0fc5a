"""Create the demo login once (editor role) and print its password that one time."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from perfhub.roles import EDITOR


class Command(BaseCommand):
    help = "Create the 'demo' editor account if it does not exist (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="demo")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            self.stdout.write(
                f"Demo login '{username}' already exists (its password was printed when it was "
                f"created; reset it with: python manage.py changepassword {username})."
            )
            return
        password = secrets.token_urlsafe(9)
        user = users.objects.create_user(username=username, password=password)
        user.groups.add(Group.objects.get_or_create(name=EDITOR)[0])
        self.stdout.write(
            self.style.SUCCESS(f"Demo login created -> user: {username}  password: {password}")
        )
