"""The resolution floor: printed values are rounded (nccl-tests busbw: two decimals), so a
difference within one print step is rounding - not a +100 % change at 8 bytes."""

from __future__ import annotations

import json
import random

import pytest

from baselines.curve_compare import compare_curves
from baselines.detect import detect, main


def tiny_and_large(tiny_ref: float, tiny_cand: float, large_cand: float):
    reference = {8: [tiny_ref] * 3, 16: [tiny_ref] * 3, 1 << 30: [100.0, 100.4, 99.7]}
    candidate = {8: [tiny_cand] * 3, 16: [tiny_cand] * 3, 1 << 30: [large_cand, 90.3, 89.8]}
    return reference, candidate


def test_without_a_floor_one_print_step_at_tiny_sizes_reads_as_a_doubling() -> None:
    result = compare_curves(*tiny_and_large(0.01, 0.02, 90.0))
    assert {s.size_bytes: s.change for s in result.sizes}[8] == "improved"
    assert result.verdict == "mixed"


def test_the_floor_keeps_one_step_unchanged_and_still_sees_the_real_regression() -> None:
    result = compare_curves(*tiny_and_large(0.01, 0.02, 90.0), resolution=0.01)
    tiny = next(s for s in result.sizes if s.size_bytes == 8)
    assert tiny.change == "unchanged" and tiny.below_resolution
    assert tiny.delta_pct == pytest.approx(100.0)  # the Δ% is still shown as computed
    large = next(s for s in result.sizes if s.size_bytes == 1 << 30)
    assert large.change == "regressed" and not large.below_resolution
    assert result.verdict == "regressed"
    assert "one print step" in result.method
    assert result.to_json()["sizes"][0]["resolution"] == 0.01


def test_more_than_one_step_is_a_change_even_at_tiny_sizes() -> None:
    result = compare_curves(*tiny_and_large(0.05, 0.10, 100.0), resolution=0.01)
    assert next(s for s in result.sizes if s.size_bytes == 8).change == "improved"


def test_resolution_per_size_and_bad_values() -> None:
    result = compare_curves(*tiny_and_large(0.01, 0.02, 90.0), resolution={8: 0.01})
    changes = {s.size_bytes: s.change for s in result.sizes}
    assert changes[8] == "unchanged" and changes[16] == "improved"  # 16 B has no floor given
    with pytest.raises(ValueError, match="resolution"):
        compare_curves({8: [1.0]}, {8: [1.0]}, resolution=-0.01)
    with pytest.raises(ValueError, match="resolution"):
        detect([1.0] * 10, resolution=float("nan"))


def test_detect_ignores_a_one_step_level_change_and_rounding_noise() -> None:
    steps = [0.01] * 40 + [0.02] * 40
    assert detect(steps).change_points, "without the floor it is a +100 % step"
    assert detect(steps, resolution=0.01).change_points == ()
    rng = random.Random(3)
    flicker = [round(0.015 + rng.gauss(0, 0.003), 2) for _ in range(200)]
    assert detect(flicker, resolution=0.01).change_points == ()


def test_detect_with_a_floor_still_catches_a_3pct_step_at_1pct_noise() -> None:
    rng = random.Random(5)
    values = [round(50 * (1 + rng.gauss(0, 0.01)), 2) for _ in range(60)]
    values += [round(48.5 * (1 + rng.gauss(0, 0.01)), 2) for _ in range(60)]
    found = detect(values, resolution=0.01).change_points
    assert [(c.index, c.direction, c.kind) for c in found] == [(60, "regression", "step")]


def test_cli_takes_the_resolution(tmp_path, capsys) -> None:
    path = tmp_path / "s.csv"
    path.write_text(
        "x,value\n" + "".join(f"{i},{v}\n" for i, v in enumerate([0.01] * 30 + [0.02] * 30))
    )
    assert main([str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["change_points"]
    assert main([str(path), "--resolution", "0.01"]) == 0
    assert json.loads(capsys.readouterr().out)["change_points"] == []
    assert main([str(path), "--resolution", "-1"]) == 2
