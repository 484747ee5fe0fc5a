"""Access to the real public artifacts in ../shared/samples, read in place (never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_DIR = TESTS_DIR.parent
SAMPLES_DIR = REPO_DIR.parent / "shared" / "samples"


def sample(relative: str) -> Path:
    """Path of one shared sample; skips the test with a clear reason when shared/ is absent."""
    path = SAMPLES_DIR / relative
    if not path.exists():
        pytest.skip(f"shared sample not available: {path} (checkout without ../shared/)")
    return path


def samples(folder: str, pattern: str = "*") -> list[Path]:
    """All shared samples in one folder (empty list when shared/ is absent)."""
    directory = SAMPLES_DIR / folder
    return sorted(p for p in directory.glob(pattern) if p.is_file()) if directory.is_dir() else []


MORE_SAMPLES_DIR = REPO_DIR.parent / "shared" / "more-samples"


def more_sample(relative: str) -> Path:
    """Path of one file of ../shared/more-samples; skips the test when it is absent."""
    path = MORE_SAMPLES_DIR / relative
    if not path.exists():
        pytest.skip(f"shared sample not available: {path} (checkout without ../shared/)")
    return path
