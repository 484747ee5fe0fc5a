"""Search: ranked, highlighted, faceted; the same tests run on SQLite FTS5 and PostgreSQL."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from artifacts.services import artifact_ingest
from knowledge.search import fts5_query, parse_query, search
from knowledge.services import page_update

pytestmark = pytest.mark.django_db


def titles(results):
    return [h.title_text for h in results.hits]


def test_an_empty_index_and_an_empty_query_answer_nothing(db):
    assert search("nccl").total == 0 and search("").hits == [] and search("   ").total == 0


def test_pages_are_found_by_words_of_title_body_tags_and_settings(make_page):
    make_page(
        title="RoCE lossless setup",
        body="Enable PFC on priority 3.\n",
        tags=["dcqcn"],
        settings=[{"kind": "env", "name": "NCCL_IB_TC", "value": "106"}],
    )
    for query in ["lossless", "priority", "dcqcn", "NCCL_IB_TC", "nccl_ib_tc", "106"]:
        assert titles(search(query)) == ["RoCE lossless setup"], query
    assert search("lossless").engine == {"sqlite": "sqlite-fts5", "postgresql": "postgresql"}.get(
        connection.vendor, "substring"
    )


def test_a_title_match_ranks_above_a_body_match(make_page):
    make_page(title="Hugepages for training hosts", body="Reserve memory at boot.\n")
    make_page(title="NUMA affinity", body="Pin the data loader. Transparent hugepages can hurt.\n")
    assert titles(search("hugepages")) == ["Hugepages for training hosts", "NUMA affinity"]
    scores = [h.score for h in search("hugepages").hits]
    assert scores[0] > scores[1]


def test_every_word_must_match_and_stemming_applies(make_page):
    make_page(title="Tuning NCCL buffers", body="Larger buffers help on InfiniBand.\n")
    make_page(title="Tuning the kernel", body="sysctl settings.\n")
    assert titles(search("tuning buffers")) == ["Tuning NCCL buffers"]
    assert titles(search("tune buffer")) == ["Tuning NCCL buffers"]  # stems: tuning/tune
    assert len(search("tuning").hits) == 2


def test_phrases_exclusions_and_or(make_page):
    make_page(title="PFC storm", body="A pause storm on priority three.\n")
    make_page(title="ECN marking", body="Priority three marking with ECN.\n")
    assert titles(search('"pause storm"')) == ["PFC storm"]
    assert titles(search("priority -storm")) == ["ECN marking"]
    assert sorted(titles(search("storm or marking"))) == ["ECN marking", "PFC storm"]


def test_snippets_highlight_matches_and_escape_everything_else(make_page):
    make_page(
        title="Xid triage",
        body="Xid 79 <script>alert(1)</script> means the GPU fell off the bus.\n",
    )
    hit = search("fell bus").hits[0]
    assert "<mark>fell</mark>" in hit.snippet and "<mark>bus</mark>" in hit.snippet
    assert "<script>" not in hit.snippet
    html = str(hit.snippet).replace("<mark>", "").replace("</mark>", "")
    assert "<" not in html  # the only markup is <mark>


def test_hostile_titles_are_escaped_in_highlighted_titles(make_page):
    make_page(title="Slow node <img src=x onerror=alert(1)> runbook", body="triage\n")
    hit = search("runbook").hits[0]
    assert (
        "<img" not in hit.title and "&lt;img" in hit.title and "<mark>runbook</mark>" in hit.title
    )


@pytest.mark.parametrize(
    "query", ['"', "*", "NEAR(a b)", "AND OR NOT", "a:b", "(", "--", "ü", "'; DROP TABLE x; --"]
)
def test_odd_queries_never_raise(make_page, query):
    make_page()
    assert search(query).total >= 0


def test_updates_reindex_the_page(make_page, editor):
    page = make_page(title="Old title", body="alpha\n")
    page_update(page=page, base_revision=1, by=editor, title="New title", body="omega\n")
    assert titles(search("omega")) == ["New title"]
    assert search("alpha").total == 0


def test_artifacts_are_found_by_name_label_host_and_metadata(db):
    artifact_ingest(
        stream=io.BytesIO(b"some counters\n"),
        name="ethtool-r07n03.txt",
        label="rack-07 storm",
        host="h200-r07n03",
        metadata={"switch": "leaf-12", "ticket": "NV-4711"},
        enqueue=False,
    )
    for query in ["ethtool", "storm", "r07n03", "leaf-12", "NV-4711"]:
        found = search(query)
        assert [h.type for h in found.hits] == ["artifact"], query
    assert search("r07n03").hits[0].url.startswith("/artifacts/")


def test_facets_count_types_topics_and_generations_and_filters_narrow(make_page, db):
    make_page(
        title="H100 NCCL tuning", topic="nccl", applies_to={"gpu": ["H100"]}, body="bandwidth\n"
    )
    make_page(
        title="H200 RoCE tuning", topic="network", applies_to={"gpu": ["H200"]}, body="bandwidth\n"
    )
    artifact_ingest(stream=io.BytesIO(b"bandwidth numbers\n"), name="bandwidth.txt", enqueue=False)
    results = search("bandwidth")
    assert results.total == 3
    facets = {name: {f.value: f.count for f in values} for name, values in results.facets.items()}
    assert facets["type"] == {"page": 2, "artifact": 1}
    assert facets["topic"] == {"nccl": 1, "network": 1}
    assert facets["generation"] == {"H100": 1, "H200": 1}
    narrowed = search("bandwidth", types=["page"], generation="H200")
    assert titles(narrowed) == ["H200 RoCE tuning"] and narrowed.total == 1
    # disjunctive: the type facet still counts the artifact when filtering by type
    counts = {f.value: f.count for f in search("bandwidth", types=["page"]).facets["type"]}
    assert counts == {"page": 2, "artifact": 1}
    assert titles(search("bandwidth", topic="network")) == ["H200 RoCE tuning"]


def test_pagination_of_hits(make_page):
    for n in range(5):
        make_page(title=f"Runbook {n}", body="triage steps\n")
    first = search("triage", limit=2)
    rest = search("triage", limit=10, offset=2)
    assert first.total == 5 and len(first.hits) == 2 and len(rest.hits) == 3
    assert not {h.key for h in first.hits} & {h.key for h in rest.hits}


def test_reindex_rebuilds_every_source(make_page, db):
    make_page(title="Reindexed page", body="zebra\n")
    from knowledge.models import SearchEntry

    SearchEntry.objects.all().delete()
    assert search("zebra").total == 0
    out = io.StringIO()
    call_command("search_reindex", stdout=out)
    assert "page: 1" in out.getvalue() and titles(search("zebra")) == ["Reindexed page"]


def test_query_translation_for_fts5():
    assert parse_query('nccl "ib hca" -tcp the') == ([["nccl"], ["ib hca"]], ["tcp"])
    groups, excluded = parse_query("pfc or ecn storm -tcp")
    assert groups == [["pfc", "ecn"], ["storm"]] and excluded == ["tcp"]
    assert fts5_query("pfc or ecn storm -tcp") == '(("pfc" OR "ecn") AND ("storm")) NOT "tcp"'
    assert fts5_query("the of") == ""  # stop words only: nothing to search
    assert fts5_query('say "hi') == '(("say") AND ("hi"))'  # a stray quote is dropped


def test_parts_of_compound_names_are_found_on_both_engines(make_page):
    make_page(
        title="TCP settings for bootstrap",
        settings=[{"kind": "sysctl", "name": "net.ipv4.tcp_mtu_probing", "value": "1"}],
        body="Hosts like ib-h100-n001.cluster.local use mlx5_0.\n",
    )
    for query in ["tcp_mtu_probing", "net.ipv4.tcp_mtu_probing", "mtu probing", "n001", "mlx5_0"]:
        assert titles(search(query)) == ["TCP settings for bootstrap"], query
