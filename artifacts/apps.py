from django.apps import AppConfig


class ArtifactsConfig(AppConfig):
    name = "artifacts"
    verbose_name = "Artifacts and evidence"

    def ready(self) -> None:
        # The evidence embed kinds (chart, artifact, finding, trace) join the documents
        # registry once every model is loaded; post-mortems and knowledge pages draw them.
        from artifacts.embeds import register_evidence_embeds

        register_evidence_embeds()
