# The generic reading of a file no parser took (issue 22, "Nothing refused silently").

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("artifacts", "0008_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="artifact",
            name="generic",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
