"""The viewer/editor/admin groups. Editors and admins may change evidence; admins also
manage users (through the Django admin, with staff status)."""

from django.db import migrations

ROLES = ("viewer", "editor", "admin")


def create_roles(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("artifacts", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
