"""The GPUs NCCL_DEBUG logs show each host using: stored as host facts by the loader, then
GPUs per node for a run's profile and the match with nvidia-smi's GPUs (keyed by bus id).

Golden values read from the samples: ``ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log`` lines
350-369 (``... rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 8000 ...`` on gdr114, busId 85000
for rank 1; 8000 and 82000 for ranks 2 and 3 on gdr116) and the 2xA100 log lines 515-517
(busId 17000 and 65000, one process driving both GPUs of mew0)."""

from __future__ import annotations

import io
import json

import pytest

from artifacts.fabric.nccl_gpus import nccl_gpu_facts
from artifacts.fabric.parsers.nccl_debug.model import CommRank
from artifacts.models import Artifact, HostFact
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from baselines.facts import Fact, nccl_used_gpus, pci_key, profile_from_facts
from baselines.models import RunContext
from tests.samples import sample

TRACE_LOG = "nccl_debug/ssbandjl_2node_4gpu_NCCL_DEBUG_TRACE_roce.log"
A100_LOG = "nccl_debug/timez_nccl_tests_2.17_allreduce_NCCL_INFO_2xA100_roce.log"


def upload(capture, content: bytes, name: str, **kwargs) -> Artifact:
    with capture(execute=True):
        outcome = artifact_ingest(stream=io.BytesIO(content), name=name, enqueue=False, **kwargs)
        artifact = artifact_parse(artifact_id=outcome.artifact.pk)
    assert artifact.status == Artifact.Status.PARSED, artifact.error
    return artifact


def gpu_rows(artifact: Artifact) -> dict[tuple[str, str], HostFact]:
    return {(f.host, f.device): f for f in artifact.host_facts.filter(name="nccl.gpu")}


def counts(artifact: Artifact) -> dict[str, tuple[float | None, str]]:
    rows = artifact.host_facts.filter(name="nccl.gpu_count")
    return {f.host: (f.number, f.extra["from"]) for f in rows}


@pytest.mark.django_db
def test_the_loader_stores_each_hosts_gpus_by_bus_id_and_their_count(
    django_capture_on_commit_callbacks,
) -> None:
    artifact = upload(
        django_capture_on_commit_callbacks,
        sample(TRACE_LOG).read_bytes(),
        "trace.log",
        kind="nccl_debug",
    )
    gpus = gpu_rows(artifact)
    assert set(gpus) == {
        ("gdr114", "0000:08:00.0"),
        ("gdr114", "0000:85:00.0"),
        ("gdr116", "0000:08:00.0"),
        ("gdr116", "0000:82:00.0"),
    }
    rank1 = gpus[("gdr114", "0000:85:00.0")]
    assert rank1.value == "85000"  # busId as NCCL printed it
    assert rank1.extra == {"bus_id": "85000", "cuda_dev": 1, "nvml_dev": 1, "ranks": [1]}
    assert gpus[("gdr116", "0000:82:00.0")].extra["ranks"] == [3]
    assert counts(artifact) == {"gdr114": (2.0, "busId"), "gdr116": (2.0, "busId")}


@pytest.mark.django_db
def test_one_process_driving_two_gpus_counts_two(django_capture_on_commit_callbacks) -> None:
    artifact = upload(
        django_capture_on_commit_callbacks,
        sample(A100_LOG).read_bytes(),
        "a100.log",
        kind="nccl_debug",
    )
    gpus = gpu_rows(artifact)
    assert set(gpus) == {("mew0", "0000:17:00.0"), ("mew0", "0000:65:00.0")}
    assert gpus[("mew0", "0000:65:00.0")].extra["ranks"] == [1]
    assert counts(artifact) == {"mew0": (2.0, "busId")}


@pytest.mark.django_db
def test_a_log_without_comm_lines_states_no_gpus(django_capture_on_commit_callbacks) -> None:
    log = sample("nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log").read_bytes()
    artifact = upload(django_capture_on_commit_callbacks, log, "ag.log", kind="nccl_debug")
    assert not artifact.host_facts.filter(name__in=["nccl.gpu", "nccl.gpu_count"]).exists()
    assert artifact.host_facts.filter(name="nccl.version").exists()  # the log did load


def rank(host: str, rank: int, nranks: int, bus: str | None, local_ranks: int | None) -> CommRank:
    address = f"0000:{bus[:-3].zfill(2)}:00.0" if bus else None
    return CommRank(
        host=host, pid=1, comm=f"0x{nranks}", comm_id=None, rank=rank, nranks=nranks,
        cuda_dev=rank % 8, nvml_dev=rank % 8, bus_id=bus, pci_address=address,
        status="complete", nnodes=None, local_rank=None, local_ranks=local_ranks,
        channels={}, init_seconds=None, init_phases={},
    )  # fmt: skip


def test_sub_communicators_do_not_count_a_gpu_twice_and_list_world_ranks() -> None:
    world = [rank("n1", k, 8, f"{k + 1:x}000", 8) for k in range(8)]
    pairs = [rank("n1", k % 2, 2, f"{k + 1:x}000", 2) for k in range(8)]  # same GPUs again
    facts = nccl_gpu_facts(world + pairs)
    gpus = [f for f in facts if f.name == "nccl.gpu"]
    assert len(gpus) == 8
    assert [f.extra["ranks"] for f in gpus] == [[k] for k in range(8)]
    assert [(f.host, f.value, f.extra) for f in facts if f.name == "nccl.gpu_count"] == [
        ("n1", 8, {"from": "busId"})
    ]


def test_without_bus_ids_the_count_comes_from_local_ranks() -> None:
    facts = nccl_gpu_facts([rank("n1", 0, 4, None, 2), rank("n2", 2, 4, None, 2)])
    assert [(f.name, f.host, f.value, f.extra) for f in facts] == [
        ("nccl.gpu_count", "n1", 2, {"from": "localRanks"}),
        ("nccl.gpu_count", "n2", 2, {"from": "localRanks"}),
    ]
    assert nccl_gpu_facts([]) == []


def test_pci_addresses_have_one_spelling() -> None:
    assert pci_key("00000000:1B:00.0") == "0000:1b:00.0"  # nvidia-smi
    assert pci_key("0000:1b:00.0") == "0000:1b:00.0"  # NCCL's busId 1b000, converted
    assert pci_key("1b:00.0") == "0000:1b:00.0"  # lspci
    assert pci_key("10000:E1:00.1") == "10000:e1:00.1"  # a VMD domain keeps its digits
    assert pci_key("trace:0") == "trace:0"


def smi_gpu(host: str, address: str, name: str) -> Fact:
    return Fact("gpu.name", name, host=host, device=address, source="nvidia_smi artifact #1")


def nccl_gpu(host: str, address: str) -> Fact:
    return Fact("nccl.gpu", address, host=host, device=address, source="nccl_debug artifact #2")


def test_gpus_per_node_from_nccl_only_when_nothing_better_is_known() -> None:
    nccl = [nccl_gpu("n1", "0000:08:00.0"), nccl_gpu("n1", "0000:85:00.0")]
    nccl += [Fact("nccl.gpu_count", "2", 2.0, host="n1"), Fact("nccl.gpu_count", "1", 1.0, "n2")]
    assert profile_from_facts(nccl) == {"gpus_per_node": 2}
    # nvidia-smi lists every GPU of the node, used or idle: it wins.
    smi = [smi_gpu("n1", f"00000000:{k:02X}:00.0", "NVIDIA H100 80GB HBM3") for k in range(4)]
    assert profile_from_facts(nccl + smi)["gpus_per_node"] == 4


def test_nvidia_smi_gpus_are_matched_to_the_gpus_nccl_used() -> None:
    # A workstation: two A100s the job ran on and three display GPUs of another model.
    smi = [smi_gpu("w1", "00000000:17:00.0", "NVIDIA A100-PCIE-40GB")]
    smi += [smi_gpu("w1", "00000000:65:00.0", "NVIDIA A100-PCIE-40GB")]
    smi += [smi_gpu("w1", f"00000000:B{k}:00.0", "NVIDIA RTX A2000") for k in range(3)]
    assert profile_from_facts(smi)["gpu_name"] == "NVIDIA RTX A2000"  # the majority, unmatched
    nccl = [nccl_gpu("w1", "0000:17:00.0"), nccl_gpu("w1", "0000:65:00.0")]
    assert nccl_used_gpus(nccl) == {("w1", "0000:17:00.0"), ("w1", "0000:65:00.0")}
    profile = profile_from_facts(smi + nccl)
    assert profile["gpu_name"] == "NVIDIA A100-PCIE-40GB"
    assert profile["gpus_per_node"] == 5  # the node has five, whatever the job used
    # NCCL GPUs of another host match nothing: the majority name stands.
    assert profile_from_facts([*smi, nccl_gpu("w2", "0000:17:00.0")])["gpu_name"] == (
        "NVIDIA RTX A2000"
    )


@pytest.mark.django_db
def test_a_metrics_run_of_a_job_gets_gpus_per_node_from_the_jobs_nccl_log(
    eager_tasks, django_capture_on_commit_callbacks
) -> None:
    # The GPUs NCCL used are a job fact: the log and the metrics upload state one job id.
    upload(
        django_capture_on_commit_callbacks,
        sample(TRACE_LOG).read_bytes(),
        "trace.log",
        kind="nccl_debug",
        metadata={"captured_at": "2024-10-18T10:30:00Z", "job": "train-42"},
    )
    doc = {
        "benchmark": "megatron-gpt3",
        "measured_at": "2024-10-18T11:00:00Z",
        "host": "gdr114",
        "metrics": [{"metric": "step_time", "unit": "ms", "value": 800.0, "better": "lower"}],
    }
    upload(
        django_capture_on_commit_callbacks,
        json.dumps(doc).encode(),
        "m.json",
        metadata={"job": "train-42"},
    )
    context = RunContext.objects.select_related("profile").get(run__benchmark="megatron-gpt3")
    assert context.profile.gpus_per_node == 2
    assert context.profile.slug == "auto-unknown-gpu-2gpu"
