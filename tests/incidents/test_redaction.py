"""Redaction: consistent, shape-keeping pseudonyms; the report never holds originals."""

import io
import json

import pytest

from incidents import redaction
from incidents.redaction import AuditTerm, LeakAudit, Redactor, identifiers_in, mask

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
    assert r.redact("busbw on mew1 dropped", "x") == "busbw on host-001 dropped"
    # Parsed names are replaced as substrings: an unknown "mew10" does not keep "mew1" in it.
    assert r.redact("mew10 is fine", "x") == "host-0010 is fine"


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


# --- identifiers the parsers extracted: substring, longest first, any case ------------------

KNOWN = {"host": ["gpu07", "gpu070", "gpu07.example.com"], "ipv4": ["10.0.8.14"]}


def test_known_hosts_glued_to_other_text_are_replaced():
    r = Redactor(known=KNOWN)
    glued = (
        "gpu070:9:9 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/"
        "gpu07:1436708:1436708 [0] NCCL INFO Bootstrap : Using ib0:10.0.8.14<0>x10.0.8.14"
    )
    out = redacted(r, [glued])[0]
    assert out == (
        "host-001:9:9 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/"
        "host-002:1436708:1436708 [0] NCCL INFO Bootstrap : Using ib0:198.18.0.1<0>x198.18.0.1"
    )


def test_known_hosts_inside_paths_and_urls_are_replaced():
    r = Redactor(known=KNOWN)
    out = redacted(
        r,
        [
            "tail /var/log/gpu07/nccl.log and /data/run-gpu070.out",
            "GET http://gpu07.example:8080/metrics and https://gpu07.example.com/x?h=gpu070",
        ],
    )
    assert out == [
        "tail /var/log/host-001/nccl.log and /data/run-host-002.out",
        "GET http://host-001.example:8080/metrics and https://host-001/x?h=host-002",
    ]


def test_known_hosts_match_in_any_case_with_one_pseudonym():
    r = Redactor(known=KNOWN)
    out = redacted(r, ["gpu07 GPU07 Gpu07 gPU070 GPU070.EXAMPLE.COM"])[0]
    assert out == "host-001 host-001 host-001 host-002 host-002.EXAMPLE.COM"


def test_a_host_that_is_the_prefix_of_another_never_splits_the_longer_one():
    for order in (["gpu07", "gpu070"], ["gpu070", "gpu07"]):
        r = Redactor(known={"host": order})
        out = r.redact("gpu070 gpu07 gpu0700 xgpu070y", "f")
        # gpu0700 is unknown: its known prefix gpu070 is replaced, never gpu07 + "00".
        assert out == "host-001 host-002 host-0010 xhost-001y", order
        assert "host-0020" not in out


def test_identifiers_of_letters_only_are_replaced_as_whole_words():
    # "crow" is a host of the samples, "WORK" a Windows workgroup: as substrings they would
    # turn "crowd" and "network" into pseudonyms, so they match where not glued to a letter
    # or digit; glued to punctuation (paths, URLs, NCCL headers) they are still replaced.
    r = Redactor(known={"host": ["crow", "crowd", "WORK"]})
    out = r.redact("crow:1:1 [0] /var/log/crow/ CROW crowd crowds network WORK", "f")
    assert out == "host-001:1:1 [0] /var/log/host-001/ host-001 host-002 crowds network host-003"
    terms = {t.text: t.whole for t in r.audit_terms()}
    assert terms == {"crow": True, "crowd": True, "work": True}
    assert audit(r.audit_terms(), out.encode(), r.pseudonyms()).clean


def test_identifiers_are_filtered_and_gpu_uuids_keep_their_prefix():
    uuid = "4f3c9e7a-8d2b-4c1e-9f00-123456789abc"
    r = Redactor(
        known={
            "guid": [f"GPU-{uuid}", "00000000-0000-0000-0000-000000000000"],
            "serial": ["N/A", "Not Specified", "1324021012345", "0"],
            "host": ["localhost", "ab", ""],
            "user": ["alice"],
        }
    )
    assert {(t.category, t.text) for t in r.audit_terms()} == {
        ("guid", uuid),
        ("serial", "1324021012345"),
        ("user", "alice"),
    }
    line = f"GPU-{uuid.upper()} SN 1324021012345 N/A localhost alice Alice"
    # User names are exact: "Alice" may be a word; hex ids and names match in any case.
    assert r.redact(line, "f") == "GPU-guid-0001 SN serial-001 N/A localhost user-001 Alice"
    with pytest.raises(ValueError, match="unknown identifier category"):
        Redactor(known={"phone": ["555-1234"]})


def test_values_found_in_pass_one_are_replaced_where_the_shape_regex_misses_them():
    r = Redactor()
    lines = ["OOB ens1:10.0.8.14<0> MAC 0c:42:a1:de:ad:01", "node10.0.8.14 0C:42:A1:DE:AD:01x"]
    assert redacted(r, lines) == [
        "OOB ens1:198.18.0.1<0> MAC 02:00:00:00:00:01",
        "node198.18.0.1 02:00:00:00:00:01x",
    ]


def test_names_guessed_from_context_stay_whole_words():
    r = Redactor()
    out = redacted(r, ["gdr114:1:1 [0] NCCL INFO x", "gdr114-ib0 /var/log/gdr114/ gdr1140"])
    assert out == ["host-001:1:1 [0] NCCL INFO x", "host-001-ib0 /var/log/host-001/ gdr1140"]


def test_identifiers_in_parsed_values():
    assert identifiers_in("eth0<10.1.2.3>, ib0<fe80::1%ib0> lo<127.0.0.1>") == [
        ("ipv4", "10.1.2.3"),
        ("ipv6", "fe80::1%ib0"),
    ]


# --- the audit ------------------------------------------------------------------------------


def audit(terms, data, pseudonyms=(), file="f"):
    a = LeakAudit(terms, pseudonyms)
    a.scan(file, io.BytesIO(data))
    return a


def test_the_audit_finds_originals_glued_in_paths_urls_and_any_case():
    terms = [AuditTerm("host", "gpu07", True, False), AuditTerm("host", "gpu070", True, False)]
    data = b"P2P/CUMEM/gpu07:1:1 /var/log/GPU07/x http://Gpu070.example/ gpu0700"
    a = audit(terms, data)
    assert not a.clean
    assert [(x.category, x.masked, x.count) for x in a.leaks] == [
        ("host", "g***7", 2),
        ("host", "g****0", 2),  # the longest at each start: gpu070 twice, not gpu07
    ]
    assert "gpu07" not in repr(a.leaks).lower()


def test_the_audit_ignores_originals_inside_pseudonyms_and_sees_across_chunks(monkeypatch):
    monkeypatch.setattr(redaction, "AUDIT_CHUNK", 7)  # matches straddle every read
    terms = [AuditTerm("host", "host-00", True, False), AuditTerm("ipv4", "10.0.8.14", True, False)]
    clean = b"host-001 x " * 20 + b"198.18.0.1\n"
    assert audit(terms, clean, ["host-001", "198.18.0.1"]).clean
    leaking = b"." * 13 + b"10.0.8.14" + b"host-0012"[:7] + b"!" + b"host-001"
    a = audit(terms, leaking, ["host-001"])
    assert [(x.masked, x.count) for x in a.leaks] == [("h*****0", 1), ("1*******4", 1)]
    assert a.bytes_read == len(leaking) and a.files == 1


def test_the_audit_of_guessed_names_is_whole_word_like_their_replacement():
    terms = [AuditTerm("host", "gdr114", True, True)]
    assert audit(terms, b"gdr1140 xgdr114").clean
    assert audit(terms, b"/var/log/GDR114/").leaks[0].count == 1


def test_the_redactor_output_passes_its_own_audit():
    r = Redactor(known=KNOWN)
    lines = [*LINES, "via P2P/CUMEM/gpu07:1:1 [0] http://GPU070.example/ /x/gpu07.example.com/"]
    out = "\n".join(redacted(r, lines)).encode()
    assert audit(r.audit_terms(), out, r.pseudonyms()).clean
    raw = "\n".join(lines).encode()
    leaks = audit(r.audit_terms(), raw, r.pseudonyms()).leaks
    assert {x.category for x in leaks} >= {"host", "ipv4", "mac", "guid", "serial", "user"}


def test_mask_shows_only_the_ends():
    assert mask("gpu07") == "g***7" and mask("ab") == "**" and mask("") == ""
