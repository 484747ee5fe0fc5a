"""Search speed of knowledge/search.py on the database at hand, against plain substring search.

Builds a synthetic corpus of technical documents (runbook-like text with NCCL variables, host
names, counters), indexes it through the real ``reindex`` path (SQLite: FTS5 triggers;
PostgreSQL: GIN index), then times a set of queries with ranking, snippets and facets, and the
same queries through the substring fallback (``LIKE``), which is what a search without a
full-text engine costs.

    .venv/bin/python benchmarks/knowledge_search.py --docs 20000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scratch .venv/bin/python \\
        benchmarks/knowledge_search.py --docs 20000

Without ``DATABASE_URL`` it runs in a throwaway SQLite file (never the developer's database);
with it, the documents of the benchmark's own source are removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_VOCABULARY = (
    "nccl allreduce busbw latency ring tree channel proxy gdrdma rail spine leaf pfc ecn cnp "
    "dscp priority pause storm congestion buffer headroom mtu gid traffic class queue pair "
    "ecmp hash adaptive routing sharp nvls nvlink nvswitch pcie link width generation replay "
    "aer xid ecc remap reset drain firmware driver kernel numa irq affinity hugepages compaction "
    "dataloader checkpoint straggler timeout watchdog flight recorder bootstrap socket verbs "
    "perftest bandwidth throughput regression baseline incident postmortem vendor ticket"
)
WORDS = _VOCABULARY.split()
QUERIES = [
    "pfc",
    "pause storm",
    '"flight recorder"',
    "nccl busbw regression",
    "NCCL_IB_QPS_PER_CONNECTION",
    "r07n03",
    "xid -ecc",
    "nvls or sharp",
    "zzznotthere",
]


def documents(n: int, seed: int) -> Iterable[object]:
    from knowledge.search import SearchDocument

    rng = random.Random(seed)
    for i in range(n):
        words = rng.choices(WORDS, k=rng.randint(150, 600))
        if i % 50 == 0:
            words.insert(rng.randrange(len(words)), "NCCL_IB_QPS_PER_CONNECTION=4")
        if i % 400 == 0:
            words.insert(rng.randrange(len(words)), "h200-r07n03")
        title = " ".join(rng.choices(WORDS, k=6)).capitalize()
        yield SearchDocument(
            source="bench",
            key=str(i),
            title=title,
            body=" ".join(words),
            url=f"/bench/{i}/",
            subtype=rng.choice(["runbook", "best_practice", "tuning_recipe"]),
            topic=rng.choice(["nccl", "network", "gpu", "kernel"]),
            generations=[rng.choice(["H100", "H200", "B200", "MI300X"])],
        )


class BenchSource:
    name = "bench"
    label = "Benchmark document"

    def __init__(self, n: int, seed: int) -> None:
        self.n, self.seed = n, seed

    def documents(self) -> Iterable[object]:
        return documents(self.n, self.seed)


def timed(fn, repeat: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    samples, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return statistics.median(samples), p95, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    scratch = None
    if not os.environ.get("DATABASE_URL"):
        scratch = tempfile.mkdtemp(prefix="perfhub-bench-")
        os.environ["PERFHUB_VAR_DIR"] = scratch
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "perfhub.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from knowledge import search as kb_search
    from knowledge.models import SearchEntry

    call_command("migrate", verbosity=0)
    kb_search.register_source(BenchSource(args.docs, args.seed))
    start = time.perf_counter()
    kb_search.reindex(["bench"])
    index_s = time.perf_counter() - start
    engine = kb_search._engine()
    fallback = kb_search._Substring()
    corpus_mb = sum(len(d.body) for d in documents(args.docs, args.seed)) / 1e6

    print(f"database: {connection.vendor}; engine: {engine.name}")
    print(f"corpus: {args.docs} documents, {corpus_mb:.1f} MB of text")
    print(f"indexing: {index_s:.2f} s ({args.docs / index_s:,.0f} documents/s)\n")
    header = (
        f"{'query':<30} {'hits':>6} {'engine ms p50':>14} {'p95':>8} {'LIKE ms p50':>12} {'p95':>8}"
    )
    print(header)
    print("-" * len(header))
    filters = kb_search.Filters()
    for query in QUERIES:
        p50, p95, result = timed(lambda q=query: kb_search.search(q, limit=20), args.repeat)
        l50, l95, _ = timed(
            lambda q=query: fallback.run(q, filters, 20, 0), max(3, args.repeat // 3)
        )
        print(f"{query:<30} {result.total:>6} {p50:>14.1f} {p95:>8.1f} {l50:>12.1f} {l95:>8.1f}")
    SearchEntry.objects.filter(source="bench").delete()
    if scratch:
        print(f"\n(scratch database in {scratch}; delete it when done)")


if __name__ == "__main__":
    main()
