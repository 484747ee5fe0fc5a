"""Prometheus: the labels of samples kept as facts (host, GPU model and UUID per GPU index,
the scrape's job/instance, the Kubernetes pod a GPU served, info metrics), and the parts of
the exposition format a file held (issue 22).

The scrapes follow the exporters' own label layouts: dcgm-exporter with ``--kubernetes``
(``gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION, container,
namespace, pod``), node_exporter's ``node_dmi_info``/``node_os_info`` and
nvidia_gpu_exporter's ``nvidia_smi_gpu_info``.
"""
# ruff: noqa: E501

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artifacts.metrics.parsers.prometheus import range as prometheus_range
from artifacts.metrics.parsers.prometheus import text as prometheus_text

UUIDS = ("GPU-1a2b3c4d-0000-1111-2222-333344445555", "GPU-9f8e7d6c-0000-1111-2222-333344445555")


def dcgm_line(gpu: int, pod: str, value: int) -> str:
    return (
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="{gpu}",UUID="{UUIDS[gpu]}",pci_bus_id="00000000:0{gpu + 7}:00.0",'
        f'device="nvidia{gpu}",modelName="NVIDIA A100-SXM4-80GB",Hostname="dgx-a100-03",'
        f'DCGM_FI_DRIVER_VERSION="535.104.05",container="trainer",namespace="ml",pod="{pod}"}} {value}'
    )


def facts_of(result: object) -> dict[tuple[str | None, str | None, str], str]:
    return {(f.host, f.device, f.name): f.value for f in result.facts}  # type: ignore[attr-defined]


def test_dcgm_exporter_labels_become_host_and_per_gpu_facts() -> None:
    text = (
        "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        f"{dcgm_line(0, 'train-0', 97)}\n{dcgm_line(1, 'train-1', 95)}\n"
    )
    result = prometheus_text.parse(io.BytesIO(text.encode()))
    facts = facts_of(result)
    for gpu, pod in ((0, "train-0"), (1, "train-1")):
        where = ("dgx-a100-03", f"GPU {gpu}")
        assert facts[(*where, "gpu.uuid")] == UUIDS[gpu]
        assert facts[(*where, "gpu.name")] == "NVIDIA A100-SXM4-80GB"
        assert facts[(*where, "gpu.bus_id")] == f"00000000:0{gpu + 7}:00.0"
        assert facts[(*where, "gpu.device_file")] == f"nvidia{gpu}"
        assert facts[(*where, "k8s.pod")] == pod
        assert (facts[(*where, "k8s.namespace")], facts[(*where, "k8s.container")]) == (
            "ml",
            "trainer",
        )
    assert result.hosts == ("dgx-a100-03",)
    # the labels that became facts do not split the counter: one series per GPU
    assert {s.counter for s in result.samples} == {"DCGM_FI_DEV_GPU_UTIL"}
    assert result.parts == ("help", "type", "samples")


def test_info_metrics_give_every_label_as_a_fact() -> None:
    text = (
        'node_dmi_info{bios_version="2.3.5",product_name="PowerEdge XE9680",sys_vendor="Dell Inc.",instance="xe9680-04:9100",job="node"} 1\n'
        'node_os_info{id="ubuntu",pretty_name="Ubuntu 22.04.4 LTS",version_id="22.04",instance="xe9680-04:9100",job="node"} 1\n'
        'nvidia_smi_gpu_info{driver_version="550.90.07",name="NVIDIA H100 80GB HBM3",uuid="GPU-509665ad-b600-ac93-3616-d754b23d636d",vbios_version="96.00.99.00.01",instance="xe9680-04:9835",job="gpu"} 1\n'
    )
    facts = facts_of(prometheus_text.parse(io.BytesIO(text.encode())))
    host = "xe9680-04"
    assert facts[(host, None, "hardware.name")] == "PowerEdge XE9680"
    assert facts[(host, None, "hardware.vendor")] == "Dell Inc."
    assert facts[(host, None, "bios.version")] == "2.3.5"
    assert facts[(host, None, "os.name")] == "Ubuntu 22.04.4 LTS"
    assert facts[(host, None, "node_os_info.version_id")] == "22.04"  # no alias: named by metric
    assert facts[(host, None, "gpu.name")] == "NVIDIA H100 80GB HBM3"
    assert facts[(host, None, "gpu.driver_version")] == "550.90.07"
    assert facts[(host, None, "gpu.uuid")] == "GPU-509665ad-b600-ac93-3616-d754b23d636d"
    assert facts[(host, None, "prometheus.job")] in ("node", "gpu")


def test_a_fragment_of_samples_without_help_or_type_lines() -> None:
    text = "\n".join(dcgm_line(g, "p", 50) for g in (0, 1)) + "\n"
    result = prometheus_text.parse(io.BytesIO(text.encode()))
    assert result.parts == ("samples",)
    assert facts_of(result)[("dgx-a100-03", "GPU 1", "gpu.uuid")] == UUIDS[1]


def test_query_range_series_labels_become_facts() -> None:
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {
                    "metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "2", "UUID": UUIDS[0],
                               "modelName": "NVIDIA A100-SXM4-80GB", "Hostname": "dgx-a100-03",
                               "pod": "train-2", "namespace": "ml", "job": "dcgm", "instance": "10.0.0.3:9400"},
                    "values": [[1717000000, "301.5"], [1717000030, "305"]],
                }
            ],
        },
    }  # fmt: skip
    result = prometheus_range.parse(io.BytesIO(json.dumps(doc).encode()))
    facts = facts_of(result)
    assert facts[("dgx-a100-03", "GPU 2", "gpu.uuid")] == UUIDS[0]
    assert facts[("dgx-a100-03", "GPU 2", "k8s.pod")] == "train-2"
    assert facts[("dgx-a100-03", None, "prometheus.instance")] == "10.0.0.3:9400"
    assert facts[("dgx-a100-03", None, "prometheus.job")] == "dcgm"
    assert result.parts == ("response", "matrix")
    bare = prometheus_range.parse(io.BytesIO(json.dumps(doc["data"]).encode()))
    assert bare.parts == ("data", "matrix") and facts_of(bare) == facts


LABEL_VALUE = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"\\'),
    min_size=1,
    max_size=20,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(LABEL_VALUE, LABEL_VALUE), min_size=1, max_size=8), st.permutations(range(5))
)
def test_any_pod_and_model_per_gpu_whatever_the_label_order(
    gpus: list[tuple[str, str]], order: list[int]
) -> None:
    lines = []
    for index, (model, pod) in enumerate(gpus):
        labels = [
            f'gpu="{index}"',
            f'modelName="{model}"',
            f'pod="{pod}"',
            'Hostname="h1"',
            f'UUID="GPU-{index:04d}"',
        ]
        lines.append("DCGM_FI_DEV_SM_CLOCK{" + ",".join(labels[i] for i in order) + "} 1410")
    facts = facts_of(prometheus_text.parse(io.BytesIO(("\n".join(lines) + "\n").encode())))
    for index, (model, pod) in enumerate(gpus):
        device = ("h1", f"GPU {index}")
        assert facts[(*device, "gpu.name")] == model and facts[(*device, "k8s.pod")] == pod
        assert facts[(*device, "gpu.uuid")] == f"GPU-{index:04d}"
