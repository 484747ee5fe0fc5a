"""Recipe settings: validation, copyable lines, env file and shell script."""

import subprocess

import pytest

from knowledge.recipes import (
    RecipeError,
    env_file,
    normalize_settings,
    parse_settings,
    shell_script,
)

SETTINGS = [
    {
        "kind": "env",
        "name": "NCCL_IB_HCA",
        "value": "=mlx5_0:1,mlx5_1:1",
        "note": "one HCA per rail",
    },
    {"kind": "env", "name": "NCCL_SOCKET_IFNAME", "value": "^lo,docker0"},
    {"kind": "sysctl", "name": "net.ipv4.tcp_mtu_probing", "value": "1"},
    {"kind": "boot", "name": "iommu", "value": "pt"},
    {"kind": "boot", "name": "nosmt", "note": "only for latency-bound jobs"},
    {"kind": "command", "value": "mlnx_qos -i eth2 --trust dscp", "scope": "host"},
    {"kind": "command", "value": "show interface ethernet 1/1 counters", "scope": "switch"},
]


def test_settings_validate_and_normalise():
    canonical = normalize_settings(SETTINGS)
    assert canonical[0] == {
        "kind": "env",
        "name": "NCCL_IB_HCA",
        "value": "=mlx5_0:1,mlx5_1:1",
        "note": "one HCA per rail",
    }
    assert canonical[5] == {
        "kind": "command",
        "value": "mlnx_qos -i eth2 --trust dscp",
        "scope": "host",
    }


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "env", "name": "NCCL IB HCA", "value": "x"},
        {"kind": "env", "name": "A", "value": "two\nlines"},
        {"kind": "env", "name": "NCCL_DEBUG"},
        {"kind": "sysctl", "name": "rmem_max", "value": "1"},
        {"kind": "registry", "name": "x", "value": "y"},
        {"kind": "command", "value": ""},
        {"kind": "command", "value": "ls", "scope": "moon"},
        "just a string",
    ],
)
def test_bad_settings_are_refused_with_the_reason(bad):
    with pytest.raises(RecipeError) as excinfo:
        normalize_settings([bad])
    assert excinfo.value.problems and "setting 1" in excinfo.value.problems[0]


def test_env_file_is_name_equals_value():
    text = env_file(parse_settings(SETTINGS), header=["NCCL on H100"])
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n" in text
    assert "NCCL_SOCKET_IFNAME=^lo,docker0\n" in text
    assert "# one HCA per rail\n" in text and text.startswith("# NCCL on H100\n")
    assert "sysctl" not in text


def test_shell_script_quotes_values_and_leaves_boot_parameters_as_comments(tmp_path):
    text = shell_script(parse_settings(SETTINGS), header=["recipe"])
    assert "export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\n" in text  # nothing to quote
    assert "export NCCL_SOCKET_IFNAME='^lo,docker0'" in text
    assert "sysctl -w net.ipv4.tcp_mtu_probing=1" in text
    assert "mlnx_qos -i eth2 --trust dscp" in text
    assert "#   iommu=pt nosmt" in text
    assert "# on the switch: show interface ethernet 1/1 counters" in text
    script = tmp_path / "recipe.sh"
    script.write_text(text)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0  # valid bash


def test_env_lines_evaluate_back_to_the_exact_values(tmp_path):
    settings = parse_settings([{"kind": "env", "name": "X", "value": 'it\'s $HOME; `rm -rf` "q"'}])
    script = tmp_path / "x.sh"
    script.write_text(settings[0].line + '\nprintf %s "$X"\n')
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=True).stdout
    assert out == 'it\'s $HOME; `rm -rf` "q"'
