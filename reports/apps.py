from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "reports"

    def ready(self) -> None:
        # Post-mortems and knowledge pages embed reports through the documents registry.
        from reports.embeds import register

        register()
