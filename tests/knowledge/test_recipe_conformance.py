"""Recipes checked on every host: sysctl and QoS settings against real ``mlnx_qos`` output and
a ``sysctl -a`` dump, conforming, differing and unknown each with its evidence line; the
fleet summary; a finding per drift, linked to the recipe and kept by a rules refresh."""

from __future__ import annotations

import io

import pytest

from artifacts.fabric.models import Finding
from artifacts.parsing import artifact_parse
from artifacts.services import artifact_ingest
from knowledge.models import PageType
from knowledge.services import page_create
from knowledge.tuning.conformance import CONFORMS, DIFFERS, UNKNOWN
from knowledge.tuning.fleet import fleet_check
from tests.artifacts.fabric.parsers.test_mlnx_qos import DSCP_MAP
from tests.artifacts.fabric.parsers.test_sysctl import DUMP
from tests.samples import more_sample

pytestmark = pytest.mark.django_db

# mlnx_qos of two more hosts, as MLNX_OFED prints it: PFC on priority 3, and PFC off.
QOS = (
    "[root@{host} ~]# mlnx_qos -i rdma0\nDCBX mode: OS controlled\nPriority trust state: dscp\n"
    "dscp2prio mapping:\n" + DSCP_MAP + "PFC configuration:\n"
    "\tpriority    0   1   2   3   4   5   6   7\n\tenabled     {pfc}\n"
    "tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%\n\t priority:  3\n"
)
RECIPE = [
    {"kind": "sysctl", "name": "net.core.rmem_max", "value": "212992"},
    {"kind": "sysctl", "name": "net.ipv4.tcp_rmem", "value": "4096 131072 6291456"},
    {"kind": "sysctl", "name": "vm.nr_hugepages", "value": "1024"},
    {"kind": "sysctl", "name": "net.ipv4.tcp_fin_timeout", "value": "15"},
    {"kind": "command", "scope": "nic", "value": "mlnx_qos -i rdma0 --trust dscp"},
    {"kind": "command", "scope": "nic", "value": "mlnx_qos -i rdma0 --pfc 0,0,0,1,0,0,0,0"},
    {"kind": "boot", "name": "iommu", "value": "pt"},
]


def ingest(data: bytes, name: str, kind: str, host: str = "") -> int:
    outcome = artifact_ingest(
        stream=io.BytesIO(data), name=name, kind=kind, host=host, enqueue=False
    )
    artifact_parse(artifact_id=outcome.artifact.pk)
    return outcome.artifact.pk


@pytest.fixture
def fleet(editor):
    # gpu-node-07: the real (cut) mlnx_qos paste -- trust and dscp2prio, no PFC table -- and
    # a sysctl -a dump; gpu-node-08 and -09: full mlnx_qos outputs, PFC on 3 and all off.
    fragment = more_sample("counters/mlnx_qos_i_rdma0_dscp_trust_FRAGMENT.txt").read_bytes()
    ingest(fragment, "qos.txt", "mlnx_qos", host="gpu-node-07")
    ingest(DUMP.encode(), "sysctl.txt", "sysctl")  # kernel.hostname = gpu-node-07
    ingest(QOS.format(host="gpu-node-08", pfc="0 0 0 1 0 0 0 0").encode(), "q8.txt", "mlnx_qos")
    ingest(QOS.format(host="gpu-node-09", pfc="0 0 0 0 0 0 0 0").encode(), "q9.txt", "mlnx_qos")
    return page_create(
        by=editor, title="RoCE host tuning", type=PageType.TUNING_RECIPE, topic="network",
        settings=RECIPE,
    )  # fmt: skip


def checks_of(summary, host):
    [result] = [h for h in summary.hosts if h.host == host]
    return result, {c.setting.name or c.setting.value: c for c in result.checks}


def test_real_samples_conforming_differing_unknown_each_with_its_line(fleet) -> None:
    summary = fleet_check(fleet)
    host, checks = checks_of(summary, "gpu-node-07")
    rmem = checks["net.core.rmem_max"]
    assert (rmem.verdict, rmem.found) == (CONFORMS, "212992")
    assert rmem.line.startswith("net.core.rmem_max = 212992  (sysctl artifact #")
    # the dump separates the triplet with tabs: the numbers are what compare
    assert checks["net.ipv4.tcp_rmem"].verdict == CONFORMS
    huge = checks["vm.nr_hugepages"]
    assert (huge.verdict, huge.found, huge.expected) == (DIFFERS, "0", "1024")
    assert "vm.nr_hugepages = 0" in huge.line
    # a key the dump's loader does not keep, and a boot parameter: unknown, never conforming
    assert checks["net.ipv4.tcp_fin_timeout"].verdict == UNKNOWN
    assert checks["iommu"].verdict == UNKNOWN
    trust = checks["mlnx_qos -i rdma0 --trust dscp"]
    assert trust.verdict == CONFORMS and trust.line.startswith("trust = dscp  (mlnx_qos artifact #")
    # the real paste stops before its PFC table: PFC is unknown, not "off"
    pfc = checks["mlnx_qos -i rdma0 --pfc 0,0,0,1,0,0,0,0"]
    assert pfc.verdict == UNKNOWN and "shows no PFC table for rdma0" in pfc.line
    assert host.verdict == DIFFERS

    lossless, checks8 = checks_of(summary, "gpu-node-08")
    assert checks8["mlnx_qos -i rdma0 --pfc 0,0,0,1,0,0,0,0"].verdict == CONFORMS
    assert checks8["net.core.rmem_max"].line == "no sysctl -a of this host states it"
    assert lossless.verdict == UNKNOWN  # conforming QoS, unknown sysctl: not "conforms"
    off, checks9 = checks_of(summary, "gpu-node-09")
    assert checks9["mlnx_qos -i rdma0 --pfc 0,0,0,1,0,0,0,0"].verdict == DIFFERS
    assert off.verdict == DIFFERS
    assert summary.counts == {CONFORMS: 0, DIFFERS: 2, UNKNOWN: 1}
    assert summary.text.startswith("0 of 3 hosts conform; 1 unknown; ")
    assert "gpu-node-09: PFC off on priority 3" in summary.text
    assert "gpu-node-07: vm.nr_hugepages is 0, recipe says 1024" in summary.text


def test_a_recipe_of_what_all_hosts_show_conforms_everywhere(fleet, editor) -> None:
    trust_only = page_create(
        by=editor, title="Trust DSCP", type=PageType.TUNING_RECIPE, topic="network",
        settings=[{"kind": "command", "scope": "nic", "value": "mlnx_qos -i rdma0 --trust dscp"}],
    )  # fmt: skip
    summary = fleet_check(trust_only)
    assert summary.text == "3 of 3 hosts conform"


def test_a_finding_per_drift_linked_to_the_recipe(fleet, viewer_client) -> None:
    page = viewer_client.get(f"/kb/{fleet.slug}/hosts/")
    html = page.content.decode()
    assert page.status_code == 200 and "0 of 3 hosts conform" in html
    assert 'data-host="gpu-node-09"' in html and "PFC enabled on none" in html
    findings = Finding.objects.filter(rule="recipe_drift").order_by("host")
    assert [(f.host, f.kb_slug) for f in findings] == [
        ("gpu-node-07", fleet.slug), ("gpu-node-09", fleet.slug)
    ]  # fmt: skip
    assert "PFC off on priority 3" in findings[1].title
    # a rules refresh of the evidence artifact keeps them; a second look adds none
    from artifacts.fabric.findings import evaluate_artifact

    evaluate_artifact(findings[1].artifact)
    viewer_client.get(f"/kb/{fleet.slug}/hosts/")
    assert Finding.objects.filter(rule="recipe_drift").count() == 2
    csv_text = viewer_client.get(f"/kb/{fleet.slug}/hosts/?format=csv").content.decode()
    assert "gpu-node-07,differs,vm.nr_hugepages,1024,0,differs" in csv_text


def test_env_settings_from_the_newest_run_of_a_host(
    editor, eager_tasks, django_capture_on_commit_callbacks
) -> None:
    from artifacts.runs.demo import MiB, sweep_files

    [tree] = [f for f in sweep_files(values={"Tree": ((0, MiB, 1.3),)}, replicates=1)]
    with django_capture_on_commit_callbacks(execute=True):
        ingest(tree.content, tree.name, "nccl_tests")
    recipe = page_create(
        by=editor, title="Ring", type=PageType.TUNING_RECIPE, topic="nccl",
        settings=[{"kind": "env", "name": "NCCL_ALGO", "value": "Ring"},
                  {"kind": "env", "name": "NCCL_PROTO", "value": "Simple"}],
    )  # fmt: skip
    summary = fleet_check(recipe)
    assert summary.hosts and {h.verdict for h in summary.hosts} == {DIFFERS}
    _, checks = checks_of(summary, summary.hosts[0].host)
    assert checks["NCCL_ALGO"].found == "Tree" and "run #" in checks["NCCL_ALGO"].line
    assert checks["NCCL_PROTO"].verdict == UNKNOWN


def test_mlxconfig_settings_against_a_real_mlxconfig_query(editor) -> None:
    """The shared sample's ``mlxconfig -q`` of a ConnectX-5 Ex on host daytona3: SRIOV_EN
    True(1), NUM_OF_VFS 6, CQE_COMPRESSION BALANCED(0), PCI_WR_ORDERING per_mkey(0); it does
    not show ROCE_ADAPTIVE_ROUTING_EN (that firmware has no such parameter)."""
    from tests.samples import sample

    data = sample("mlxconfig/mailinglist_cx5ex_mcx516a_cda_mlxconfig_q_DEQUOTED.txt").read_bytes()
    ingest(data, "mlxconfig.txt", "mlxconfig")
    recipe = page_create(
        by=editor, title="CX5 firmware settings", type=PageType.TUNING_RECIPE, topic="network",
        settings=[
            {"kind": "command", "scope": "nic",
             "value": "mlxconfig -d /dev/mst/mt4121_pciconf0 -y set SRIOV_EN=1 "
                      "CQE_COMPRESSION=BALANCED"},
            {"kind": "command", "scope": "nic", "value": "mlxconfig -y set NUM_OF_VFS=8"},
            {"kind": "command", "scope": "nic", "value": "mlxconfig -y set PCI_WR_ORDERING=1"},
            {"kind": "command", "scope": "nic",
             "value": "mlxconfig -y set ROCE_ADAPTIVE_ROUTING_EN=1"},
        ],
    )  # fmt: skip
    summary = fleet_check(recipe, hosts=["daytona3"])
    result, checks = checks_of(summary, "daytona3")
    both = checks[recipe.parsed_settings[0].value]
    assert both.verdict == CONFORMS
    assert "SRIOV_EN = True(1)  (/dev/mst/mt4121_pciconf0, mlxconfig artifact #" in both.line
    vfs = checks["mlxconfig -y set NUM_OF_VFS=8"]
    assert (vfs.verdict, vfs.found, vfs.expected) == (DIFFERS, "NUM_OF_VFS=6", "NUM_OF_VFS=8")
    ordering = checks["mlxconfig -y set PCI_WR_ORDERING=1"]
    assert (ordering.verdict, ordering.found) == (DIFFERS, "PCI_WR_ORDERING=per_mkey(0)")
    routing = checks["mlxconfig -y set ROCE_ADAPTIVE_ROUTING_EN=1"]
    assert routing.verdict == UNKNOWN
    assert "does not show ROCE_ADAPTIVE_ROUTING_EN" in routing.line
    assert result.verdict == DIFFERS


def test_the_fleet_of_one_profile(fleet, viewer_client) -> None:
    from baselines.models import HardwareProfile, HostProfileMapping

    profile = HardwareProfile.objects.create(slug="roce-lab", fabric="roce_v2")
    HostProfileMapping.objects.create(pattern="gpu-node-0[89]", profile=profile)
    html = viewer_client.get(f"/kb/{fleet.slug}/hosts/?profile=roce-lab").content.decode()
    assert "0 of 2 hosts conform; 1 unknown; gpu-node-09: PFC off on priority 3" in html
    assert 'data-host="gpu-node-07"' not in html
    everyone = viewer_client.get(f"/kb/{fleet.slug}/hosts/?profile=all").content.decode()
    assert "0 of 3 hosts conform" in everyone
    # looking at one profile leaves the other hosts' findings alone
    assert Finding.objects.filter(rule="recipe_drift", host="gpu-node-07").exists()


def test_the_host_page_and_writing_recipes_need_a_login(fleet) -> None:
    from django.test import Client

    anonymous = Client()
    assert anonymous.get(f"/kb/{fleet.slug}/hosts/").status_code == 302
    assert anonymous.post("/kb/sweeps/1/recipe/", {"value": "Tree"}).status_code == 302
    assert not Finding.objects.filter(rule="recipe_drift").exists()
