"""The evidence families are packages inside the ``artifacts`` app, not apps of their own, so
moving their models changed no table and needs no migration. These tests hold that promise
for a database built by the migrations (as every existing installation was): a row written
through the migration history's models of every table is read back by today's models.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.apps import apps
from django.db import connection, models
from django.db.migrations.loader import MigrationLoader

pytestmark = pytest.mark.django_db


def _historical_apps() -> Any:
    return MigrationLoader(connection).project_state().apps


def _value(field: models.Field, made: dict[str, Any]) -> Any:
    if field.is_relation:
        return made[field.related_model._meta.label_lower]
    if field.choices:
        return field.choices[0][0]
    by_type: list[tuple[type, Any]] = [
        (models.BooleanField, False),
        (models.DateTimeField, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)),
        (models.DateField, dt.date(2024, 1, 2)),
        (models.JSONField, {}),
        (models.FloatField, 1.5),
        (models.IntegerField, 7),  # also Big/Positive/Small
        (models.FileField, "evidence/x.bin"),
        (models.UUIDField, "12345678-1234-5678-1234-567812345678"),
        (models.CharField, "x"),  # also Slug/Email/URL
        (models.TextField, "x"),
    ]
    for kind, value in by_type:
        if isinstance(field, kind):
            return value
    raise AssertionError(f"no sample value for {field!r}")


def _create(model: type[models.Model], made: dict[str, Any]) -> models.Model:
    values = {}
    for field in model._meta.concrete_fields:
        if field.primary_key and not field.is_relation:
            continue
        if field.null or field.has_default():
            continue
        values[field.name] = _value(field, made)
    return model.objects.create(**values)


def _dependency_order(models_: list[type[models.Model]]) -> list[type[models.Model]]:
    ordered: list[type[models.Model]] = []
    pending = list(models_)
    while pending:
        for model in pending:
            needs = {
                f.related_model._meta.label_lower
                for f in model._meta.concrete_fields
                if f.is_relation and not f.null and f.related_model is not model
            }
            if needs <= {m._meta.label_lower for m in ordered} | {"auth.user"}:
                ordered.append(model)
                pending.remove(model)
                break
        else:
            raise AssertionError(f"cannot order {pending}")
    return ordered


def test_every_artifacts_model_keeps_the_table_and_columns_the_migrations_made() -> None:
    historical = _historical_apps()
    live_models = list(apps.get_app_config("artifacts").get_models())
    assert len(live_models) >= 20
    for model in live_models:
        old = historical.get_model("artifacts", model._meta.model_name)
        assert old._meta.db_table == model._meta.db_table
        assert {f.column for f in old._meta.concrete_fields} == {
            f.column for f in model._meta.concrete_fields
        }, model


def test_rows_written_at_the_migrated_head_read_back_through_the_family_models(
    django_user_model: Any,
) -> None:
    historical = _historical_apps()
    made: dict[str, Any] = {
        "auth.user": historical.get_model("auth", "User").objects.create(username="old")
    }
    old_models = [
        historical.get_model("artifacts", m._meta.model_name)
        for m in apps.get_app_config("artifacts").get_models()
    ]
    for model in _dependency_order([m for m in old_models if not m._meta.abstract]):
        made[model._meta.label_lower] = _create(model, made)
    for model in apps.get_app_config("artifacts").get_models():
        row = made[model._meta.label_lower]
        read = model.objects.get(pk=row.pk)
        assert model.__module__.startswith("artifacts."), model
        for field in model._meta.concrete_fields:
            assert field.value_from_object(read) == field.value_from_object(row), (model, field)
