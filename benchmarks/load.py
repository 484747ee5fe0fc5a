"""Many uploaders and browsers at once against the production stack, run locally and bounded.

Starts, on 127.0.0.1 only: gunicorn + WhiteNoise over a fresh PostgreSQL database
(``perfhub_load``, copied from a migrated template holding the demo data, so the pages
have something to show), N Celery worker processes (``celery -A perfhub worker -c 1``) on
Redis database 13. Then, for ``--seconds``:

* U uploaders POST real samples of ../shared/samples and ../shared/more-samples to
  ``/api/v1/artifacts/`` with an API token, each upload's bytes made unique (see
  ``unique_bytes``) so deduplication hides none;
* B browsers, signed in, GET the main pages of the first hour in turn.

Then it waits (bounded) until no artifact is pending or parsing, and prints upload and page
latency percentiles, errors (non-2xx and exceptions), artifacts sent against stored (by
sha256: none lost, none twice) and the time until every upload was parsed. Every loop is
bounded in count and time; every process it started is stopped on the way out, Ctrl-C too.

    .venv/bin/python benchmarks/load.py                        # 16 uploaders, 8 browsers, 60 s
    .venv/bin/python benchmarks/load.py --compare-workers 1,2  # the same load, 1 then 2 workers
    # the same 400 uploads queued first, then parsed by 1, then 2 workers alone on the cores
    .venv/bin/python benchmarks/load.py --compare-workers 1,2 --backlog --uploads 400 --browsers 0
    # uploads on a gunicorn of their own (an ingest pool), pages on the other
    .venv/bin/python benchmarks/load.py --web-workers 2 --upload-web-workers 2

It also says who used the CPU during the load (web, workers, PostgreSQL, itself, the rest
of the machine): on a shared machine, a slow run is often someone else's.

Targets (issue 27): 16 uploaders + 8 browsers for 60 s, no errors, no lost or duplicated
artifact, page p95 < 500 ms while uploads run; ingest throughput grows with workers.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import math
import os
import pwd
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from browser_pages import free_port, journey  # noqa: E402  (sibling script)
from bulk_load import psql  # noqa: E402
from proc import machine_line  # noqa: E402

PAGE_P95_TARGET_MS = 500.0
SAMPLE_DIRS = (ROOT.parent / "shared" / "samples", ROOT.parent / "shared" / "more-samples")
# Files whose bytes cannot take a suffix without changing what they are (a SQLite database,
# an Nsight report): left out rather than sent identical and deduplicated.
BINARY_SUFFIXES = (".sqlite", ".nsys-rep", ".qdrep", ".ncu-rep")
USER = "bench-load"
BIN = Path(sys.executable).parent


# ---------------------------------------------------------------------------------------
# What is sent
# ---------------------------------------------------------------------------------------


def sample_files() -> list[tuple[str, bytes]]:
    """(name, bytes) of every shared sample that can be made unique, read once."""
    files = []
    for folder in SAMPLE_DIRS:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if (
                path.is_file()
                and path.name != "MANIFEST.tsv"
                and path.suffix not in BINARY_SUFFIXES
            ):
                files.append((path.name, path.read_bytes()))
    return files


def unique_bytes(name: str, data: bytes, stamp: int) -> bytes:
    """The same content in bytes no other upload has.

    gzip: an empty gzip member whose header mtime is ``stamp`` (readers decompress every
    member, so the content is unchanged). Text (JSON, XML and CSV included): a last line of
    spaces and tabs spelling ``stamp`` in binary, whitespace that JSON and XML allow after the
    document and that line-based parsers skip.
    """
    if name.endswith(".gz"):
        return data + gzip.compress(b"", mtime=stamp & 0xFFFFFFFF)
    spelled = "".join(" \t"[int(bit)] for bit in f"{stamp:040b}").encode()
    return data + (b"" if data.endswith(b"\n") else b"\n") + spelled + b"\n"


# ---------------------------------------------------------------------------------------
# The stack: database, broker, workers, web server
# ---------------------------------------------------------------------------------------


@dataclass
class Stack:
    database: str
    template: str
    var: Path
    broker: str
    env: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.env = {
            **os.environ,
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{self.database}",
            "CELERY_BROKER_URL": self.broker,
            "PERFHUB_VAR_DIR": str(self.var),
            "PERFHUB_TASKS_EAGER": "0",
            "DEBUG": "0",
        }
        # This process reads the same database (token, session, the drain poll).
        os.environ.update(self.env)

    def manage(self, *args: str) -> None:
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, check=True)

    def prepare_template(self, rebuild: bool) -> None:
        """A migrated database with the demo data, copied for every run (seconds, not the
        minute that migrating and seeding take on the 2-core machine)."""
        exists = psql(f"SELECT 1 FROM pg_database WHERE datname = '{self.template}'") == "1"
        if exists and not rebuild:
            return
        print(f"building template database {self.template} (migrate + seed_demo) ...", flush=True)
        psql(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')
        psql(f'CREATE DATABASE "{self.template}"')
        env = {
            **self.env,
            "DATABASE_URL": self.env["DATABASE_URL"].replace(self.database, self.template),
        }
        for args in (["migrate", "-v0"], ["ensure_demo_user"], ["seed_demo"]):
            subprocess.run(
                [sys.executable, "manage.py", *args],
                cwd=ROOT,
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
            )

    def fresh_database(self) -> None:
        from django.db import connections

        connections.close_all()  # DROP ... WITH (FORCE) would cut them anyway
        psql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        psql(f'CREATE DATABASE "{self.database}" TEMPLATE "{self.template}"')
        self.manage("migrate", "-v0")  # migrations newer than the template, if any
        shutil.rmtree(self.var / "media", ignore_errors=True)
        import redis

        redis.Redis.from_url(self.broker).flushdb()  # only the load test's database number

    def collect_static(self) -> None:
        """As `make run` does: again only when a file of static/ is newer than the manifest
        (the brotli pass over plotly.js takes minutes on this machine)."""
        manifest = self.var / "static" / "staticfiles.json"
        newest = max(
            (p.stat().st_mtime for p in (ROOT / "static").rglob("*") if p.is_file()), default=0.0
        )
        if not manifest.exists() or manifest.stat().st_mtime < newest:
            print("collectstatic ...", flush=True)
            self.manage("collectstatic", "--noinput", "-v0")

    def start(self, argv: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            # A session of its own: Ctrl-C reaches only this script, which stops the children
            # in order (a worker's warm shutdown) instead of every process at once.
            proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=out, stderr=out, start_new_session=True
            )
        self.procs.append(proc)
        return proc

    def start_workers(self, count: int, nice: int = 0, timeout: float = 180.0) -> None:
        logs = []
        for i in range(count):
            log = self.var / f"worker{i}.log"
            log.unlink(missing_ok=True)
            self.start(
                [
                    *(["nice", "-n", str(nice)] if nice else []),
                    str(BIN / "celery"),
                    "-A",
                    "perfhub",
                    "worker",
                    "-c",
                    "1",
                    "-n",
                    f"load{i}@%h",
                    "--loglevel",
                    "INFO",
                    "--without-gossip",
                    "--without-mingle",
                ],
                log,
            )
            logs.append(log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(b" ready." in log.read_bytes() for log in logs if log.exists()):
                return
            time.sleep(0.5)
        raise SystemExit(f"Celery workers not ready within {timeout:.0f} s (see {self.var})")

    def start_web(self, workers: int, timeout: float = 120.0) -> str:
        port = free_port()
        self.start(
            [
                str(BIN / "gunicorn"),
                "perfhub.wsgi",
                "-b",
                f"127.0.0.1:{port}",
                "-w",
                str(workers),
                "--log-level",
                "warning",
            ],
            self.var / f"gunicorn-{port}.log",
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    return f"http://127.0.0.1:{port}"
            time.sleep(0.2)
        raise SystemExit(f"gunicorn did not listen within {timeout:.0f} s")

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds used so far by the web server, the workers, the PostgreSQL server,
        this script, and the whole machine (every core, every process).

        PostgreSQL is counted whole, by its user: backends come and go within a run (each
        lives as long as its connection), and the postmaster's children times keep those
        that ended; other databases' work on this server is in the figure too.
        """
        tick = os.sysconf("SC_CLK_TCK")
        groups = {p.pid: "web" if "gunicorn" in str(p.args) else "workers" for p in self.procs}
        try:
            postgres_uid = pwd.getpwnam("postgres").pw_uid
        except KeyError:
            postgres_uid = -1
        used: Counter[str] = Counter()
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                rest = stat.read_text().rsplit(")", 1)[1].split()
                uid = stat.parent.stat().st_uid
            except (OSError, IndexError, ValueError):
                continue  # a process that ended meanwhile
            # fields after the name: state ppid pgrp ... utime(12th) stime cutime cstime
            jiffies = sum(int(v) for v in rest[11:15])
            if int(rest[2]) in groups:
                used[groups[int(rest[2])]] += jiffies / tick
            elif uid == postgres_uid:
                used["postgres"] += jiffies / tick
        own = resource.getrusage(resource.RUSAGE_SELF)
        used["load generator"] = own.ru_utime + own.ru_stime
        with open("/proc/stat") as fh:
            total = fh.readline().split()[1:]
        # user nice system (idle iowait) irq softirq steal: every core's busy time
        busy = sum(int(v) for i, v in enumerate(total[:8]) if i not in (3, 4))
        used["machine"] = busy / tick
        return dict(used)

    def stop(self) -> None:
        """SIGTERM (Celery's warm shutdown, gunicorn's graceful stop), then SIGKILL after 30 s;
        each to the process group this script started, never by name."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.procs.clear()


def credentials() -> tuple[str, str]:
    """(API token, session cookie) of an editor made for the load test."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import Group, User
    from django.test import Client
    from rest_framework.authtoken.models import Token

    user, _ = User.objects.get_or_create(username=USER)
    user.groups.add(Group.objects.get_or_create(name="editor")[0])
    token, _ = Token.objects.get_or_create(user=user)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return token.key, client.cookies[settings.SESSION_COOKIE_NAME].value


# ---------------------------------------------------------------------------------------
# The load
# ---------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What every client saw; appended to from many threads (list.append holds the GIL)."""

    upload_ms: list[float] = field(default_factory=list)
    page_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    sent: dict[str, str] = field(default_factory=dict)  # sha256 -> name
    created: int = 0
    deduplicated: int = 0


def uploader(
    url: str,
    token: str,
    files: list[tuple[str, bytes]],
    picks: itertools.count[int],
    nonce: int,
    tally: Tally,
    end: float,
    max_requests: int,
    total: int,
) -> None:
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    for _ in range(max_requests):
        if time.monotonic() >= end:
            return
        n = next(picks)  # itertools.count is atomic under the GIL: no two uploads share n
        if n >= total:
            return
        name, data = files[n % len(files)]
        body = unique_bytes(name, data, nonce + n)
        clock = time.perf_counter()
        try:
            response = session.post(
                f"{url}/api/v1/artifacts/",
                files={"file": (name, body)},
                data={"label": "load-test"},
                timeout=(5, 120),
            )
        except requests.RequestException as exc:
            tally.errors[f"upload {type(exc).__name__}"] += 1
            continue
        tally.upload_ms.append((time.perf_counter() - clock) * 1000)
        if response.status_code not in (200, 201):
            tally.errors[f"upload HTTP {response.status_code}"] += 1
            continue
        tally.sent[hashlib.sha256(body).hexdigest()] = name
        if response.json().get("duplicate"):
            tally.deduplicated += 1
        else:
            tally.created += 1


def browser(
    url: str,
    cookie: tuple[str, str],
    pages: list[tuple[str, str]],
    start: int,
    tally: Tally,
    end: float,
    max_requests: int,
) -> None:
    import requests

    session = requests.Session()
    session.cookies.set(*cookie, domain="127.0.0.1")
    for i in range(max_requests):
        if time.monotonic() >= end:
            return
        name, path = pages[(start + i) % len(pages)]
        clock = time.perf_counter()
        try:
            response = session.get(url + path, timeout=(5, 60), allow_redirects=False)
        except requests.RequestException as exc:
            tally.errors[f"page {type(exc).__name__}"] += 1
            continue
        tally.page_ms[name].append((time.perf_counter() - clock) * 1000)
        if not 200 <= response.status_code < 300:
            tally.errors[f"page {name} HTTP {response.status_code}"] += 1


def warm_up(
    url: str, token: str, cookie: tuple[str, str], pages: list[tuple[str, str]], web_workers: int
) -> None:
    """Every page and the API list, from as many clients as gunicorn has workers, before the
    clock starts: a worker's first request imports the views (seconds on this machine), a
    cost of starting the server, not of the load."""
    import requests

    def visit() -> None:
        session = requests.Session()
        session.cookies.set(*cookie, domain="127.0.0.1")
        for _, path in pages:
            session.get(url + path, timeout=(5, 120))
        session.get(
            f"{url}/api/v1/artifacts/",
            headers={"Authorization": f"Token {token}"},
            timeout=(5, 120),
        )

    threads = [threading.Thread(target=visit, daemon=True) for _ in range(2 * web_workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)


def run_clients(targets: list[threading.Thread], seconds: float) -> None:
    for thread in targets:
        thread.start()
    # Each request has its own timeout (120 s at most), so every thread ends by then.
    deadline = time.monotonic() + seconds + 130
    for thread in targets:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in targets):
        raise SystemExit("a client thread outlived its deadline")


# ---------------------------------------------------------------------------------------
# After the load
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    workers: int
    tally: Tally
    seconds: float
    drained_s: float | None  # None: still pending/parsing when the poll gave up
    stored: int
    lost: int
    twice: int
    statuses: dict[str, int]
    ingest_per_s: float  # uploads parsed per second, from the first upload to the last parse
    # uploads parsed per second once the load ended: the workers alone, no web requests
    # competing for the cores (None: too few parses were left for the figure to mean much)
    after_per_s: float | None
    cpu: dict[str, float]  # CPU seconds during the load window, by who used them


def drain(timeout: float) -> float | None:
    """Seconds until no artifact is pending or parsing (polled every second), or None."""
    from artifacts.models import Artifact

    clock = time.monotonic()
    while time.monotonic() - clock < timeout:
        if not Artifact.objects.filter(status__in=["pending", "parsing"]).exists():
            return time.monotonic() - clock
        time.sleep(1.0)
    return None


def check(
    workers: int,
    tally: Tally,
    seconds: float,
    ended: datetime,
    drained: float | None,
    cpu: dict[str, float],
    parsing_from: datetime | None = None,
) -> Outcome:
    from django.db.models import Count, Max, Min

    from artifacts.models import Artifact

    sent = list(tally.sent)
    rows = Artifact.objects.filter(sha256__in=sent)
    per_sha = Counter(rows.values_list("sha256", flat=True))
    statuses = dict(rows.values_list("status").annotate(n=Count("id")).order_by())
    span = rows.aggregate(first=Min("uploaded_at"), last=Max("parsed_at"))
    done = sum(n for status, n in statuses.items() if status not in ("pending", "parsing"))
    ingest, after = 0.0, None
    start = max(span["first"], parsing_from) if parsing_from and span["first"] else span["first"]
    if span["last"] and start:
        ingest = done / max(1e-3, (span["last"] - start).total_seconds())
    late = rows.filter(parsed_at__gt=ended).count()
    if span["last"] and late >= 20:
        after = late / max(1e-3, (span["last"] - ended).total_seconds())
    return Outcome(
        workers=workers,
        tally=tally,
        seconds=seconds,
        drained_s=drained,
        stored=len(per_sha),
        lost=len(set(sent) - set(per_sha)),
        twice=sum(1 for n in per_sha.values() if n > 1),
        statuses=statuses,
        ingest_per_s=ingest,
        after_per_s=after,
        cpu=cpu,
    )


def per_s(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.2f}"


def pct(values: list[float], q: int) -> float:
    """The q-th percentile (nearest rank: a latency some request really had)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def report(out: Outcome, uploaders: int, browsers: int) -> bool:
    t = out.tally
    pages = [ms for values in t.page_ms.values() for ms in values]
    drained = f"{out.drained_s:.0f} s" if out.drained_s is not None else "NOT drained"
    print(
        f"\n{uploaders} uploaders + {browsers} browsers for {out.seconds:.0f} s, "
        f"{out.workers} Celery worker process(es)"
    )
    print("| measure | count | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for label, values in (("upload (POST /api/v1/artifacts/)", t.upload_ms), ("page (GET)", pages)):
        print(
            f"| {label} | {len(values)} | {pct(values, 50):.0f} | {pct(values, 95):.0f} | "
            f"{max(values, default=float('nan')):.0f} |"
        )
    for name, values in sorted(t.page_ms.items()):
        print(
            f"| &nbsp; {name} | {len(values)} | {pct(values, 50):.0f} | {pct(values, 95):.0f} | "
            f"{max(values):.0f} |"
        )
    errors = sum(t.errors.values())
    print(f"\nerrors: {errors}" + (f" ({dict(t.errors)})" if errors else ""))
    print(
        f"artifacts sent {len(t.sent)} (created {t.created}, answered as duplicates "
        f"{t.deduplicated}), stored {out.stored}, lost {out.lost}, stored twice {out.twice}"
    )
    print(f"statuses of the uploads: {dict(sorted(out.statuses.items()))}")
    print(
        f"every upload parsed {drained} after the load ended; ingest "
        f"{out.ingest_per_s:.2f} uploads/s (first upload to last parse), "
        f"{per_s(out.after_per_s)} uploads/s once the load ended (workers alone)"
    )
    cores = len(os.sched_getaffinity(0))
    ours = {name: sec for name, sec in out.cpu.items() if name != "machine"}
    others = max(0.0, out.cpu.get("machine", 0.0) - sum(ours.values()))
    print(
        f"CPU seconds during the load ({cores} cores x {out.seconds:.0f} s = "
        f"{cores * out.seconds:.0f}): "
        + ", ".join(f"{name} {sec:.0f}" for name, sec in sorted(ours.items()))
        + f", everything else on the machine {others:.0f}"
    )
    page_p95 = pct(pages, 95)
    ok = {
        "no errors": errors == 0,
        "no lost or duplicated artifact": out.lost == 0 and out.twice == 0 and t.deduplicated == 0,
        f"page p95 < {PAGE_P95_TARGET_MS:.0f} ms": not pages or page_p95 < PAGE_P95_TARGET_MS,
        "every upload parsed": out.drained_s is not None,
    }
    print("targets: " + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in ok.items()))
    return all(ok.values())


# ---------------------------------------------------------------------------------------
# One run, and the comparison
# ---------------------------------------------------------------------------------------


def one_run(
    stack: Stack, args: argparse.Namespace, workers: int, files: list[tuple[str, bytes]]
) -> Outcome:
    stack.fresh_database()
    token, cookie = credentials()
    from django.conf import settings

    pages = journey()
    if not args.backlog:
        stack.start_workers(workers, nice=args.worker_nice)
    url = stack.start_web(args.web_workers)
    # A second server for the uploads, as a load balancer sending POST /api/v1/artifacts/ to
    # ingest nodes would: pages then never wait behind an upload for a web worker.
    upload_url = stack.start_web(args.upload_web_workers) if args.upload_web_workers else url
    try:
        warm_up(url, token, (settings.SESSION_COOKIE_NAME, cookie), pages, args.web_workers)
        if upload_url != url:
            warm_up(upload_url, token, (settings.SESSION_COOKIE_NAME, cookie), pages[:1],
                    args.upload_web_workers)  # fmt: skip
        tally = Tally()
        picks = itertools.count()
        nonce = random.getrandbits(24) << 16  # stamps of this run differ from any earlier one
        end = time.monotonic() + args.seconds
        clients = [
            threading.Thread(
                target=uploader,
                daemon=True,
                args=(
                    upload_url,
                    token,
                    files,
                    picks,
                    nonce,
                    tally,
                    end,
                    args.max_requests,
                    args.uploads or sys.maxsize,
                ),
            )
            for _ in range(args.uploaders)
        ]
        session = (settings.SESSION_COOKIE_NAME, cookie)
        clients += [
            threading.Thread(
                target=browser,
                daemon=True,
                args=(url, session, pages, i, tally, end, args.max_requests),
            )
            for i in range(args.browsers)
        ]
        print(
            f"load: {len(files)} sample files, {args.uploaders} uploaders, {args.browsers} "
            f"browsers, {workers} worker(s) (nice {args.worker_nice}), {args.web_workers} "
            f"gunicorn workers"
            + (f" + {args.upload_web_workers} for uploads" if upload_url != url else "")
            + f", {args.seconds:.0f} s ...",
            flush=True,
        )
        before = stack.cpu_seconds()
        clock = time.monotonic()
        run_clients(clients, args.seconds)
        elapsed = time.monotonic() - clock  # less than --seconds when --uploads N ran out
        ended = datetime.now(UTC)
        parsing_from = None
        if args.backlog:  # every upload is queued: now the workers alone parse the backlog
            stack.start_workers(workers, nice=args.worker_nice)
            parsing_from = datetime.now(UTC)
        after = stack.cpu_seconds()
        cpu = {name: after.get(name, 0.0) - before.get(name, 0.0) for name in after}
        drained = drain(args.drain_timeout)
        return check(workers, tally, elapsed, ended, drained, cpu, parsing_from)
    finally:
        stack.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploaders", type=int, default=16)
    parser.add_argument("--browsers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
    parser.add_argument("--compare-workers", help="e.g. 1,2: the same load with each count")
    parser.add_argument(
        "--web-workers", type=int, default=4, help="gunicorn workers (README's deployment: -w 4)"
    )
    parser.add_argument(
        "--uploads",
        type=int,
        default=0,
        help="N > 0: stop after N uploads in all (the same files in the same order each "
        "run, so --compare-workers compares the same work)",
    )
    parser.add_argument(
        "--backlog",
        action="store_true",
        help="start the workers only after the load: ingest is then the rate at which they "
        "parse a queued backlog with nothing else on the cores (use with --uploads N)",
    )
    parser.add_argument(
        "--upload-web-workers",
        type=int,
        default=0,
        help="N > 0: uploads go to a second gunicorn of N workers, pages to the first",
    )
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=0,
        help="run the Celery workers under nice -n N (parses yield the cores to the web)",
    )
    parser.add_argument("--max-requests", type=int, default=5000, help="per client, a bound")
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=900.0,
        help="seconds to wait for every upload to be parsed",
    )
    parser.add_argument("--database", default="perfhub_load")
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--var", type=Path, default=Path("/tmp/perfhub-load-var"))
    parser.add_argument("--rebuild-template", action="store_true")
    args = parser.parse_args()
    if not args.broker.startswith(("redis://127.0.0.1", "redis://localhost")):
        raise SystemExit("the load test only talks to 127.0.0.1")
    counts = (
        [int(c) for c in args.compare_workers.split(",")]
        if args.compare_workers
        else [args.workers]
    )
    files = sample_files()
    if not files:
        raise SystemExit(f"no samples in {', '.join(map(str, SAMPLE_DIRS))}")

    def interrupted(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # SIGTERM too: the finally blocks stop what was started

    # SIGINT too: a shell that starts the script in the background ignores it by default.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, interrupted)
    args.var.mkdir(parents=True, exist_ok=True)
    stack = Stack(
        database=args.database,
        template=f"{args.database}_template",
        var=args.var,
        broker=args.broker,
    )
    import django

    django.setup()
    print(machine_line())
    stack.prepare_template(args.rebuild_template)
    stack.collect_static()
    outcomes = []
    try:
        for workers in counts:
            outcomes.append(one_run(stack, args, workers, files))
            report(outcomes[-1], args.uploaders, args.browsers)
    finally:
        stack.stop()
    if len(outcomes) > 1:
        base = outcomes[0]
        print("\n| workers | uploads | ingest /s | ratio | after load /s | ratio | drained after |")
        print("|---|---|---|---|---|---|---|")
        for out in outcomes:
            drained = f"{out.drained_s:.0f} s" if out.drained_s is not None else "not drained"
            ratio = "-"
            if out.after_per_s and base.after_per_s:
                ratio = f"{out.after_per_s / base.after_per_s:.2f}"
            print(
                f"| {out.workers} | {len(out.tally.sent)} | {out.ingest_per_s:.2f} | "
                f"{out.ingest_per_s / max(base.ingest_per_s, 1e-9):.2f} | "
                f"{per_s(out.after_per_s)} | {ratio} | {drained} |"
            )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: every process the load test started was stopped", file=sys.stderr)
        sys.exit(130)
