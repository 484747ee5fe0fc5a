from django.apps import AppConfig


class IncidentsConfig(AppConfig):
    name = "incidents"

    def ready(self) -> None:
        # Embeds of other apps' evidence (findings, trace breakdowns) join the registry here,
        # after every app's models are loaded.
        from incidents.evidence_embeds import register

        register()
