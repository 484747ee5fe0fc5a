"""Generated variation over the whole real corpus: Hypothesis composes, on every text
sample of ../shared/samples and ../shared/more-samples, random prefix shapes and separators
(stamps, tags with repeating hosts, known launchers), prompts of several shells, other
programs' lines before, between and after ours (tests/fixtures/noise/), cut lines
(fragments), CRLF, UTF-8 BOM / UTF-16, colour codes and trailing spaces. The property: the
same kind, and every fact of the original (of the kept fragment, when lines are cut) still
read (tests/transforms.py ``check_variation``).

The default profile is small (a couple of variants per sample, derandomized, so the suite
stays green and quick); ``HYPOTHESIS_PROFILE=variation-large`` or
``benchmarks/real_inputs.py --generated N`` draws many more. Each failure found and fixed
is kept below as an explicit ``@example``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from artifacts.parsers import OTHER
from tests.transforms import (
    Variation,
    check_variation,
    original_reading,
    sample_id,
    text_samples,
    variations,
)

# Files this large (torch traces) get one variant: a reading takes a second or more.
LARGE_BYTES = 256 * 1024
_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
settings.register_profile("variation-small", max_examples=2, derandomize=True, **_COMMON)
settings.register_profile("variation-large", max_examples=60, **_COMMON)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "variation-small")
if not PROFILE.startswith("variation-"):
    PROFILE = "variation-small"


@pytest.mark.parametrize("path", text_samples(), ids=sample_id)
def test_generated_variants_keep_kind_and_facts(path: Path) -> None:
    kind, want = original_reading(path)
    if kind in ("?", OTHER) or isinstance(want, str):
        pytest.skip(f"{path.name}: not evidence of a known kind ({want})")
    data = path.read_bytes()
    profile = settings.get_profile(PROFILE)
    examples = 1 if len(data) > LARGE_BYTES and PROFILE == "variation-small" else None

    @settings(profile, max_examples=examples or profile.max_examples)
    @given(variation=variations(sample_id(path)))
    def check(variation: Variation) -> None:
        why = check_variation(path.name, data, kind, want, variation, sample=sample_id(path))
        assert why is None, f"{sample_id(path)} {variation.labels()}: {why}\n{variation}"

    check()
