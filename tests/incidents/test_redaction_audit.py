"""The redaction audit: identifiers the parsers extracted never reach a published bundle.

Every file of the finished zip is read back; glued lines, names inside paths and URLs,
upper/lower case and prefix hosts (gpu07 / gpu070) are all replaced, and a bundle in which
one original survives is refused with the leak listed (masked).
"""

import io
import json
import zipfile

import pytest
from django.utils import timezone

from artifacts.fabric.models import HostFact, LogEvent
from incidents.bundles.services import bundle_identifiers, bundle_request
from incidents.models import EvidenceBundle
from incidents.redaction import Redactor
from incidents.services import incident_attach_artifacts
from tests.incidents.conftest import ingest, ingest_bytes

pytestmark = pytest.mark.django_db

UUID = "4f3c9e7a-8d2b-4c1e-9f00-123456789abc"
SERIAL = "1652922051234"
LOG = (
    # Two processes' lines glued together, as a multi-process log writes them.
    "gpu070:99:99 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/"
    "gpu07:1436708:1436708 [0] NCCL INFO Bootstrap : Using ib0:10.20.30.40<0>\n"
    "rsync /var/log/gpu07/nccl.log http://gpu07.example:8080/x GPU07 Gpu070 done\n"
    f"GPU-{UUID.upper()} on GPU070 serial {SERIAL} /home/alice/run\n"
)
ORIGINALS = ("gpu07", "gpu070", "10.20.30.40", UUID, SERIAL)


@pytest.fixture
def leaky_log(incident, editor):
    log = ingest_bytes("gpu07-debug.log", LOG.encode(), host="gpu07")
    HostFact.objects.create(
        artifact=log, host="gpu070", device="00000000:17:00.0", name="gpu.uuid",
        value=f"GPU-{UUID}", observed_at=timezone.now(),
    )  # fmt: skip
    HostFact.objects.create(
        artifact=log, host="gpu070", name="gpu.serial", value=SERIAL, observed_at=timezone.now()
    )
    HostFact.objects.create(
        artifact=log, host="gpu07", name="nccl.socket_devices", value="ib0<10.20.30.40>",
        observed_at=timezone.now(),
    )  # fmt: skip
    incident_attach_artifacts(incident=incident, artifact_ids=[log.pk], by=editor)
    return log


def zip_entries(bundle):
    with bundle.file.open("rb") as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    return {info.filename: archive.read(info) for info in archive.infolist()}


def test_bundle_identifiers_come_from_every_parsed_row(incident, leaky_log):
    nccl = ingest("nccl_debug/ssbandjl_2node_4gpu_all_gather_NCCL_INFO_roce.log")
    LogEvent.objects.create(artifact=nccl, kind="nccl_warn", host="evt-host9", text="x")
    found = bundle_identifiers([leaky_log, nccl], incident=incident)
    assert {"gpu07", "gpu070", "cnode2-005", "evt-host9"} <= found["host"]
    assert {"gdr114", "gdr116"} <= found["host"]  # NCCL log facts of the parsed log
    assert f"GPU-{UUID}" in found["guid"] and SERIAL in found["serial"]
    assert "10.20.30.40" in found["ipv4"]  # inside the socket-device fact "ib0<...>"


def test_bundle_identifiers_include_the_parts_of_support_bundles(incident, leaky_log):
    bundle = ingest_bytes("nvidia-bug-report.log", b"a support bundle\n")
    part = ingest_bytes("nvidia-smi-q.txt", b"a section\n", parent=bundle)
    HostFact.objects.create(
        artifact=part, host="dgx-b200-17", name="gpu.serial", value="1654321098765",
        observed_at=timezone.now(),
    )  # fmt: skip
    found = bundle_identifiers([bundle])
    assert "dgx-b200-17" in found["host"] and "1654321098765" in found["serial"]


def test_a_redacted_bundle_holds_no_original_anywhere_and_says_it_was_audited(
    incident, editor, leaky_log
):
    bundle = bundle_request(by=editor, incident=incident, artifact_ids=[leaky_log.pk])
    assert bundle.status == EvidenceBundle.Status.READY, bundle.error
    files = zip_entries(bundle)
    for name, data in files.items():
        text = (name + "\n" + data.decode("utf-8", "replace")).lower()
        for original in ORIGINALS:
            assert original.lower() not in text, (original, name)
    raw = next(v for k, v in files.items() if "/raw/" in k).decode()
    lines = raw.splitlines()
    # The glued line keeps its shape; the two prefix hosts get two pseudonyms, in any case.
    assert lines[0].startswith("host-002:99:99 [1] NCCL INFO") and "/CUMEM/host-001:" in lines[0]
    assert "/var/log/host-001/" in lines[1] and "http://host-001.example:8080/" in lines[1]
    assert lines[1].endswith("host-001 host-002 done")
    assert lines[2].startswith("GPU-guid-0001 on host-002 serial serial-001 /home/user-001/")
    audit = bundle.report["audit"]
    assert audit["passed"] is True and audit["leaks"] == []
    assert audit["entries"] == len(files) and audit["identifiers"] >= len(ORIGINALS)
    again = bundle_request(by=editor, incident=incident, artifact_ids=[leaky_log.pk])
    assert again.sha256 == bundle.sha256  # deterministic with the audit in place


def test_a_surviving_identifier_fails_the_bundle_with_the_leak_listed_masked(
    incident, editor, leaky_log, monkeypatch
):
    replace = Redactor._replace

    def misses_gpu070(self, category, match, file):  # a replacer bug, simulated
        if match.group(0).lower() == "gpu070":
            return match.group(0)
        return replace(self, category, match, file)

    monkeypatch.setattr(Redactor, "_replace", misses_gpu070)
    bundle = bundle_request(by=editor, incident=incident, artifact_ids=[leaky_log.pk])
    assert bundle.status == EvidenceBundle.Status.FAILED
    assert not bundle.file and not bundle.sha256  # nothing was published
    assert "refused to publish" in bundle.error and "host g****0" in bundle.error
    assert "gpu070" not in bundle.error.lower()
    audit = bundle.report["audit"]
    assert audit["passed"] is False
    leaks = {(x["category"], x["identifier"], x["file"]): x["count"] for x in audit["leaks"]}
    # The raw log: glued line, "Gpu070", "on GPU070"; the facts in the manifest/README too.
    raw = next(k for k in leaks if k[2].startswith("raw/"))
    assert raw[:2] == ("host", "g****0") and leaks[raw] == 3
    assert "gpu070" not in json.dumps(bundle.report).lower()
