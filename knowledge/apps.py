from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
    verbose_name = "Knowledge base"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from artifacts.models import Artifact
        from knowledge import citations, evidence_kinds, indexing, sources  # noqa: F401 - registries

        post_save.connect(
            indexing.artifact_saved, sender=Artifact, dispatch_uid="kb-index-artifact"
        )
        post_delete.connect(
            indexing.artifact_deleted, sender=Artifact, dispatch_uid="kb-unindex-artifact"
        )
        sources.connect()  # incidents, post-mortems, vendor tickets (when installed)
        evidence_kinds.register()  # pages cite incidents, findings and reports
