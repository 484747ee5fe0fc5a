"""GPU models and generations as drivers and tools print them. Pure.

* ``gpu_model("NVIDIA H100 80GB HBM3")`` -> ``"H100"``
* ``gpu_generation("H100")`` -> ``"Hopper"``
"""

from __future__ import annotations

import re

# (pattern on the model name, generation); first match wins, so longer names come first.
_GENERATIONS: tuple[tuple[str, str], ...] = (
    (r"^GB[23]00", "Blackwell"),
    (r"^B[123]00", "Blackwell"),
    (r"^GH200", "Hopper"),
    (r"^H(100|200|800|20)\b", "Hopper"),
    (r"^A(100|800|10|30|40)\b", "Ampere"),
    (r"^L(4|40S?)\b", "Ada Lovelace"),
    (r"^V100", "Volta"),
    (r"^MI3\d\d", "CDNA 3"),
    (r"^MI2\d\d", "CDNA 2"),
)
_MODEL = re.compile(r"\b(GB\d{3}|GH\d{3}|[ABHLV]\d{2,3}S?|MI\d{3}[AX]?)\b", re.IGNORECASE)


def gpu_model(name: str) -> str:
    """The model in a GPU name as drivers print it ("Tesla V100-SXM2-16GB" -> "V100")."""
    match = _MODEL.search(name or "")
    return match.group(1).upper() if match else (name or "").strip()[:60]


def gpu_generation(model: str) -> str:
    for pattern, generation in _GENERATIONS:
        if re.match(pattern, model or "", re.IGNORECASE):
            return generation
    return ""
