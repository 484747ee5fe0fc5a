"""``python -m baselines.detect FILE.csv``: the JSON the issue specifies, exit 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.baselines.detect_series import dip, step

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baselines.detect", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _csv(path: Path, values, *, blank_lines: bool = False) -> Path:
    lines = ["x,value"]
    for i, v in enumerate(values):
        lines.append(f"2.{i // 10}.{i % 10},{v:.4f}")
        if blank_lines and i % 50 == 0:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_prints_change_points_and_outliers_as_json(tmp_path):
    y = dip(1, 120, 6, 8.0)
    y[40] *= 0.6
    result = _run(str(_csv(tmp_path / "s.csv", y, blank_lines=True)))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"change_points", "outliers"}
    assert data["outliers"] == [40]
    first, second = data["change_points"]
    assert {"index", "direction", "magnitude_pct", "kind"} <= set(first)
    assert first["kind"] == "step" and first["direction"] == "regression"
    assert abs(first["index"] - 120) <= 2 and abs(second["index"] - 126) <= 2
    assert first["magnitude_pct"] < -5
    assert first["x"] == f"2.{first['index'] // 10}.{first['index'] % 10}"  # the row's label


def test_direction_lower_and_stdin(tmp_path):
    y = step(2, 100, 6.0)
    text = _csv(tmp_path / "s.csv", y).read_text()
    higher = json.loads(_run("-", stdin=text).stdout)["change_points"][0]
    lower = json.loads(_run("-", "--direction", "lower", stdin=text).stdout)["change_points"][0]
    assert higher["direction"] == "improvement" and lower["direction"] == "regression"


def test_the_cli_prints_what_detect_returns(tmp_path):
    from baselines.detect import detect

    y = step(3, 150, -4.0)
    out = json.loads(_run(str(_csv(tmp_path / "s.csv", y))).stdout)
    expected = detect([round(v, 4) for v in y]).to_json()
    for cp in out["change_points"]:
        del cp["x"]
    assert out == expected


def test_a_header_only_file_has_no_changes(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("x,value\n\n")
    result = _run(str(path))
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"change_points": [], "outliers": []}


def test_a_bad_number_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("x,value\na,1.0\nb,12x\nc,3\n")
    result = _run(str(path))
    assert result.returncode == 2
    assert "line 3" in result.stderr and "'12x'" in result.stderr
    assert result.stdout == ""


def test_non_finite_values_and_missing_columns_are_refused(tmp_path):
    nan = tmp_path / "nan.csv"
    nan.write_text("x,value\na,nan\n")
    assert _run(str(nan)).returncode == 2
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("x,busbw\na,1\n")
    result = _run(str(nocol))
    assert result.returncode == 2 and "'value' column" in result.stderr
    short = tmp_path / "short.csv"
    short.write_text("x,value\na\n")
    assert _run(str(short)).returncode == 2


def test_a_missing_file_exits_2(tmp_path):
    result = _run(str(tmp_path / "nope.csv"))
    assert result.returncode == 2 and "nope.csv" in result.stderr


def test_detection_is_pure_and_never_imports_django():
    code = "import sys, baselines.detect, baselines.curve_compare; print('django' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"
