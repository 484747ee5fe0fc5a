"""From a ParseResult to typed evidence rows: kind -> the loader of its family.

Called inside the parse transaction. Each loader first deletes what an earlier parse of the
same artifact produced, so parsing is idempotent: the rows always reflect exactly one parse.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from artifacts.bundles.loaders import BUNDLE_LOADERS
from artifacts.fabric.config_loaders import CONFIG_LOADERS
from artifacts.fabric.loaders import FABRIC_LOADERS
from artifacts.metrics.loaders import METRICS_LOADERS
from artifacts.models.core import Artifact
from artifacts.nsight.loaders import NSIGHT_LOADERS
from artifacts.parsers import ParseResult
from artifacts.runs.loaders import RUN_LOADERS
from artifacts.traces.loaders import load_torch_trace


def load_result(artifact: Artifact, result: ParseResult) -> None:
    loader = LOADERS.get(result.kind)
    if loader is not None:
        loader(artifact, result)


LOADERS: dict[str, Callable[[Artifact, Any], None]] = {
    **RUN_LOADERS,
    **METRICS_LOADERS,
    **FABRIC_LOADERS,
    **CONFIG_LOADERS,
    "torch_trace": load_torch_trace,
    **NSIGHT_LOADERS,
    **BUNDLE_LOADERS,
}
