"""Redaction: consistent, shape-keeping pseudonyms; the report never holds originals."""

import json

from incidents.redaction import Redactor

LINES = [
    "gdr114:1766944:1766944 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB ens1:10.0.8.14<0>",
    "#  Rank  1 Group  0 Pid 340134 on cnode2-016 device  0 [0000:43:00] NVIDIA H100 80GB HBM3",
    "ssh alice@gdr116 ls /home/alice/jobs; MAC 0c:42:a1:de:ad:01 fe80::e42:a1ff:fede:ad01%ens1",
    "Node GUID: 0x0c42a1030099aabb  Serial Number : 1324021012345  "
    "GPU-4f3c9e7a-8d2b-4c1e-9f00-123456789abc",
    "gdr114.cluster.local said hi to 10.0.8.14 and bob@corp.example; "
    "mask 255.255.255.0 lo 127.0.0.1",
    "project ACME-7781 in job 99",
]


def redacted(redactor, lines, file="f.log"):
    for line in lines:
        redactor.discover(line)
    return [redactor.redact(line, file) for line in lines]


def test_every_category_is_replaced_and_noise_is_kept():
    r = Redactor(patterns=[("project", r"ACME-\d+")])
    out = "\n".join(redacted(r, LINES))
    for secret in (
        "gdr114",
        "gdr116",
        "cnode2-016",
        "10.0.8.14",
        "alice",
        "0c:42:a1:de:ad:01",
        "fe80::e42",
        "0x0c42a1030099aabb",
        "1324021012345",
        "4f3c9e7a",
        "bob@corp",
        "ACME-7781",
        "cluster.local",
    ):
        assert secret not in out, secret
    assert "255.255.255.0" in out and "127.0.0.1" in out  # netmask and loopback identify no one
    assert "mlx5_0" in out and "NVIDIA H100 80GB HBM3" in out and "job 99" in out
    assert "OOB ens1:198.18.0.1<0>" in out  # addresses keep their shape
    assert "02:00:00:00:00:01" in out and "2001:db8::1" in out and "project-001" in out


def test_the_same_original_gets_the_same_pseudonym_everywhere():
    r = Redactor()
    out = redacted(r, LINES)
    assert out[0].startswith("host-001:1766944:1766944 [0]")
    assert out[4].startswith("host-001 said hi to 198.18.0.1")  # FQDN = same host, same IP
    aliases = {x.original: x.alias for x in r.replacements()}
    assert aliases["gdr114"] == "host-001" and aliases["alice"] == "user-001"
    again = r.redact("gdr114 and GDR114 at 10.0.8.14", "other.csv")
    assert again == "host-001 and host-001 at 198.18.0.1"


def test_known_hosts_from_parsed_facts_are_redacted_without_context():
    r = Redactor(known_hosts=["mew0", "mew1"])
    assert r.redact("busbw on mew1 dropped; mew10 is fine", "x") == (
        "busbw on host-001 dropped; mew10 is fine"
    )


def test_the_report_counts_per_file_and_never_names_originals():
    r = Redactor()
    redacted(r, LINES[:2], "a.log")
    redacted(r, LINES[:1], "b.log")
    report = r.report()
    text = json.dumps(report)
    assert "gdr114" not in text and "10.0.8.14" not in text
    host = report["categories"]["host"]
    assert host["aliases"]["host-001"] == {"occurrences": 2, "files": ["a.log", "b.log"]}
    assert report["files"]["b.log"] == {"host": 1, "ipv4": 1}


def test_pseudonyms_are_numbered_in_order_of_appearance():
    first, second = Redactor(), Redactor()
    assert redacted(first, LINES) == redacted(second, LINES)
