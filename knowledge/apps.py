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
        # A sweep page offers "write a recipe" and shows the recipes it proves or disputes;
        # recipes cite sweeps (knowledge/tuning/proof.py registers the kind on import).
        from baselines.sweeps.hooks import sweep_recipes
        from knowledge.tuning import citing

        citing.register()
        sweep_recipes.provide(_sweep_panel)


def _sweep_panel(sweep: object, request: object) -> dict[str, object]:
    from knowledge.tuning.views import sweep_panel

    return sweep_panel(sweep, request)  # type: ignore[arg-type]
