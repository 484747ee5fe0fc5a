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
    """Path of one sample of ../shared/more-samples (skips when it is absent)."""
    path = MORE_SAMPLES_DIR / relative
    if not path.exists():
        pytest.skip(f"shared sample not available: {path} (checkout without ../shared/)")
    return path


def more_samples(folder: str, pattern: str = "*") -> list[Path]:
    """All samples in one folder of ../shared/more-samples (empty list when it is absent)."""
    directory = MORE_SAMPLES_DIR / folder
    return sorted(p for p in directory.glob(pattern) if p.is_file()) if directory.is_dir() else []


def all_samples(folder: str, pattern: str = "*") -> list[Path]:
    """The samples of one folder of both ../shared/samples and ../shared/more-samples, read
    alike: the first folder's files first (parametrized ids stay as they were), then the
    other's. File names never repeat across the two folders, so ``p.name`` stays a stable id.
    """
    return samples(folder, pattern) + more_samples(folder, pattern)


def relative_name(path: Path) -> str:
    """``folder/name`` of a sample below whichever of the two roots holds it."""
    for root in (SAMPLES_DIR, MORE_SAMPLES_DIR):
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return path.name


def any_sample(relative: str) -> Path:
    """Path of ``folder/name`` in ../shared/samples or else ../shared/more-samples (skips the
    test when neither holds it)."""
    first = SAMPLES_DIR / relative
    return first if first.exists() else more_sample(relative)
