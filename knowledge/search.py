"""One search over everything the team writes and uploads, as a registry of sources.

A *source* turns its objects into :class:`SearchDocument` s (title, plain-text body, URL,
facets). Documents land in one table, ``SearchEntry``; the database's own full-text engine
searches it:

* SQLite (the zero-config default): an FTS5 table mirrors the entries through triggers
  (created by migration 0002 only on SQLite), ranked with BM25, title weighted 8x;
* PostgreSQL (production): a stored ``tsvector`` column (title weighted A, body B) with a GIN
  index, ranked with ``ts_rank``, snippets from ``ts_headline``;
* anything else: a plain substring match, unranked, so the page still works.

Both engines read the same query language: words are ANDed, ``"quoted phrases"`` match
in order, ``-word`` excludes, ``a or b`` allows either. Snippets are escaped HTML in which
only the ``<mark>`` highlights are markup.

Sources are registered at import time; other apps add theirs from ``AppConfig.ready`` and
call :func:`index_document` / :func:`remove_document` from their services::

    from knowledge.search import SearchDocument, register_source, index_document
    register_source(IncidentSearch())           # .name = "incident", .label, .documents()
    index_document(SearchDocument(source="incident", key=str(pk), title=..., body=..., url=...))
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import nh3
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.expressions import RawSQL
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from documents.markdown import markdown_to_unsafe_html
from knowledge.models import SearchEntry

START, STOP = "\x02", "\x03"  # highlight marks inside the engine; never in indexed text
FTS_TABLE = "knowledge_searchentry_fts"
PG_CONFIG = "english"
TITLE_WEIGHT = 8.0
MAX_FACET_ROWS = 20_000  # facets are counted over at most this many matches
SNIPPET_WORDS = 28
# The words PostgreSQL's english configuration ignores (its english.stop); dropped on SQLite
# too, so that a query means the same on both engines. Quoted phrases keep them.
_STOPWORD_TEXT = (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his "
    "himself she her hers herself it its itself they them their theirs themselves what which "
    "who whom this that these those am is are was were be been being have has had having do "
    "does did doing a an the and but if or because as until while of at by for with about "
    "against between into through during before after above below to from up down in out on "
    "off over under again further then once here there when where why how all any both each "
    "few more most other some such no nor not only own same so than too very s t can will "
    "just don should now "
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@dataclass(frozen=True)
class SearchDocument:
    source: str
    key: str
    title: str
    body: str
    url: str
    subtype: str = ""
    topic: str = ""
    generations: Sequence[str] = ()
    updated_at: datetime | None = None


class SearchSource(Protocol):
    name: str
    label: str

    def documents(self) -> Iterable[SearchDocument]:
        """Every document of the source (for ``manage.py search_reindex``)."""
        ...


SOURCES: dict[str, SearchSource] = {}


def register_source(source: SearchSource) -> None:
    SOURCES[source.name] = source


def source_label(name: str) -> str:
    source = SOURCES.get(name)
    return source.label if source else name


def _url_of(source: str, key: str) -> str:
    """The link of a document indexed without one (``url=""``): its source's ``url(key)``.

    Sources whose documents are written outside the web process (artifacts, by the ingest
    command and the worker) index no URL: building one loads the whole URL configuration
    (every view, DRF, pandas: ~1.5 s in a fresh process). The web process answers it instead.
    """
    url_for = getattr(SOURCES.get(source), "url", None)
    return url_for(key) if url_for else ""


# --- writing the index -----------------------------------------------------------------------


def _clean(text: str, limit: int) -> str:
    return (text or "").replace(START, " ").replace(STOP, " ").replace("\x00", " ")[:limit]


_COMPOUND = re.compile(r"\w+(?:[._:/\-]+\w+)+")


def compound_parts(text: str) -> str:
    """``net.ipv4.tcp_mtu_probing mlx5_0`` -> ``net ipv4 tcp mtu probing\nmlx5 0``, once each.

    PostgreSQL keeps ``net.ipv4.tcp`` or ``ethtool-r07n03.txt`` as one lexeme and SQLite splits
    them; indexing the parts as well lets a search for ``tcp_mtu_probing`` or ``r07n03`` find
    the document on both.
    """
    parts = (
        " ".join(p for p in re.split(r"[^0-9A-Za-z]+", m) if p) for m in _COMPOUND.findall(text)
    )
    return "\n".join(dict.fromkeys(parts))[:200_000]


def _entry_fields(doc: SearchDocument) -> dict[str, Any]:
    generations = "".join(f"|{g}" for g in doc.generations) + ("|" if doc.generations else "")
    title, body = _clean(doc.title, 300), _clean(doc.body, 1_000_000)
    return {
        "title": title,
        "body": body,
        "keywords": compound_parts(f"{title}\n{body}"),
        "url": doc.url[:500],
        "subtype": doc.subtype[:40],
        "topic": doc.topic[:40],
        "generations": generations[:300],
        "updated_at": doc.updated_at,
    }


def index_document(doc: SearchDocument) -> None:
    SearchEntry.objects.update_or_create(
        source=doc.source, key=doc.key[:64], defaults=_entry_fields(doc)
    )


def remove_document(source: str, key: str) -> None:
    SearchEntry.objects.filter(source=source, key=str(key)[:64]).delete()


def reindex(names: Iterable[str] | None = None) -> dict[str, int]:
    """Rebuild the entries of some sources (all by default) from their documents."""
    counts: dict[str, int] = {}
    for name in list(names or SOURCES):
        source = SOURCES[name]
        with transaction.atomic():
            SearchEntry.objects.filter(source=name).delete()
            entries = [
                SearchEntry(source=doc.source, key=doc.key[:64], **_entry_fields(doc))
                for doc in source.documents()
            ]
            SearchEntry.objects.bulk_create(entries, batch_size=500)
        counts[name] = len(entries)
    return counts


def markdown_text(markdown: str) -> str:
    """Plain text of Markdown, for the index (so snippets show words, not ``**`` and tags)."""
    stripped = nh3.clean(markdown_to_unsafe_html(markdown), tags=set())
    return html.unescape(stripped)


# --- reading it ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    source: str
    key: str
    title: SafeString
    url: str
    snippet: SafeString
    subtype: str
    topic: str
    generations: tuple[str, ...]
    score: float

    @property
    def type(self) -> str:
        return self.source

    @property
    def type_label(self) -> str:
        return source_label(self.source)

    @property
    def title_text(self) -> str:
        return html.unescape(re.sub(r"</?mark>", "", self.title))

    @property
    def snippet_text(self) -> str:
        return html.unescape(re.sub(r"</?mark>", "", self.snippet))


@dataclass(frozen=True)
class FacetValue:
    value: str
    count: int
    selected: bool


@dataclass
class SearchResults:
    query: str
    hits: list[Hit]
    total: int
    facets: dict[str, list[FacetValue]] = field(default_factory=dict)
    engine: str = ""


@dataclass(frozen=True)
class Filters:
    types: tuple[str, ...] = ()
    topic: str = ""
    generation: str = ""

    def allows(self, source: str, topic: str, generations: str, *, skip: str = "") -> bool:
        if skip != "type" and self.types and source not in self.types:
            return False
        if skip != "topic" and self.topic and topic != self.topic:
            return False
        return not (
            skip != "generation"
            and self.generation
            and f"|{self.generation.lower()}|" not in (generations or "").lower()
        )

    def q(self) -> Q:
        condition = Q()
        if self.types:
            condition &= Q(source__in=self.types)
        if self.topic:
            condition &= Q(topic=self.topic)
        if self.generation:
            condition &= Q(generations__icontains=f"|{self.generation}|")
        return condition


def search(
    query: str,
    *,
    types: Sequence[str] = (),
    topic: str = "",
    generation: str = "",
    limit: int = 20,
    offset: int = 0,
) -> SearchResults:
    """Ranked hits for ``query`` with highlighted snippets, and facet counts.

    Facet counts are "disjunctive": the counts of one facet apply every *other* filter, so
    picking a topic still shows how many hits each other topic has.
    """
    text = (query or "").strip()[:400]
    filters = Filters(tuple(t for t in types if t), topic or "", generation or "")
    if not text:
        return SearchResults(query=text, hits=[], total=0)
    engine = _engine()
    hits, rows = engine.run(text, filters, limit, offset)
    total = sum(1 for row in rows if filters.allows(*row))
    return SearchResults(
        query=text, hits=hits, total=total, facets=_facets(rows, filters), engine=engine.name
    )


def _facets(rows: list[tuple[str, str, str]], filters: Filters) -> dict[str, list[FacetValue]]:
    counts: dict[str, dict[str, int]] = {"type": {}, "topic": {}, "generation": {}}
    for source, topic, generations in rows:
        if filters.allows(source, topic, generations, skip="type"):
            counts["type"][source] = counts["type"].get(source, 0) + 1
        if topic and filters.allows(source, topic, generations, skip="topic"):
            counts["topic"][topic] = counts["topic"].get(topic, 0) + 1
        if filters.allows(source, topic, generations, skip="generation"):
            for g in filter(None, (generations or "").split("|")):
                counts["generation"][g] = counts["generation"].get(g, 0) + 1
    selected = {
        "type": set(filters.types),
        "topic": {filters.topic},
        "generation": {filters.generation},
    }
    return {
        name: [
            FacetValue(value, count, value in selected[name])
            for value, count in sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        for name, values in counts.items()
    }


def highlighted(text: str) -> SafeString:
    """Escape everything, then turn the engine's marks into ``<mark>`` (and only those)."""
    escaped = escape(text or "")
    opened = escaped.count(START)
    closed = escaped.count(STOP)
    if opened != closed:  # a cut-off snippet: never leave a <mark> open
        escaped = escaped.replace(START, "").replace(STOP, "")
    return mark_safe(escaped.replace(START, "<mark>").replace(STOP, "</mark>"))  # escaped above


def _hit(row: Sequence[Any], score: float, title_hl: str, snippet: str) -> Hit:
    source, key, _title, url, subtype, topic, generations = row
    return Hit(
        source=source,
        key=key,
        title=highlighted(title_hl),
        url=url or _url_of(source, key),
        snippet=highlighted(snippet),
        subtype=subtype,
        topic=topic,
        generations=tuple(g for g in (generations or "").split("|") if g),
        score=float(score or 0.0),
    )


# --- engines ---------------------------------------------------------------------------------

_PHRASE = re.compile(r'(-?)"([^"]*)"|(\S+)')


def parse_query(text: str) -> tuple[list[list[str]], list[str]]:
    """``[[phrase, ...OR...], ...AND...]`` and the excluded phrases (web-search syntax)."""
    groups: list[list[str]] = []
    excluded: list[str] = []
    join_next = False
    for match in _PHRASE.finditer(text):
        negated, quoted, word = match.group(1), match.group(2), match.group(3)
        if word is not None and word.lower() == "or" and groups:
            join_next = True
            continue
        if word is not None and word.startswith("-") and len(word) > 1:
            negated, word = "-", word[1:]
        phrase = quoted if quoted is not None else word.replace('"', "")
        if not re.search(r"\w", phrase or ""):
            continue
        if quoted is None and phrase.lower() in STOPWORDS:
            continue
        if negated:
            excluded.append(phrase)
        elif join_next:
            groups[-1].append(phrase)
        else:
            groups.append([phrase])
        join_next = False
    return groups, excluded


def fts5_query(text: str) -> str:
    """The user's query as an FTS5 MATCH expression (every phrase quoted: no syntax errors)."""
    groups, excluded = parse_query(text)
    if not groups:
        return ""

    def quote(phrase: str) -> str:
        return '"' + phrase.replace('"', '""') + '"'

    positive = " AND ".join("(" + " OR ".join(quote(p) for p in g) + ")" for g in groups)
    expression = f"({positive})"
    for phrase in excluded:
        expression += f" NOT {quote(phrase)}"
    return expression


_COLUMNS = ("source", "key", "title", "url", "subtype", "topic", "generations")


class _SqliteFts:
    name = "sqlite-fts5"

    def run(
        self, text: str, filters: Filters, limit: int, offset: int
    ) -> tuple[list[Hit], list[tuple[str, str, str]]]:
        match = fts5_query(text)
        if not match:
            return [], []
        where, params = _sql_filters(filters)
        cols = ", ".join(f"e.{c}" for c in _COLUMNS)
        join = f"FROM {FTS_TABLE} JOIN knowledge_searchentry e ON e.id = {FTS_TABLE}.rowid"
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {cols}, bm25({FTS_TABLE}, %s, 1.0, 1.0) AS score, "
                f"highlight({FTS_TABLE}, 0, %s, %s), "
                f"snippet({FTS_TABLE}, 1, %s, %s, '…', %s) "
                f"{join} WHERE {FTS_TABLE} MATCH %s{where} "
                "ORDER BY score, e.id LIMIT %s OFFSET %s",
                [TITLE_WEIGHT, START, STOP, START, STOP, SNIPPET_WORDS, match, *params, limit,
                 offset],
            )  # fmt: skip
            found = cursor.fetchall()
            cursor.execute(
                f"SELECT e.source, e.topic, e.generations {join} WHERE {FTS_TABLE} MATCH %s "
                "LIMIT %s",
                [match, MAX_FACET_ROWS],
            )
            rows = [tuple(r) for r in cursor.fetchall()]
        n = len(_COLUMNS)
        # bm25 is lower-is-better and negative; turn it into a positive higher-is-better score
        hits = [_hit(r[:n], -float(r[n]), r[n + 1], r[n + 2]) for r in found]
        return hits, rows


def _sql_filters(filters: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filters.types:
        clauses.append("e.source IN (" + ", ".join(["%s"] * len(filters.types)) + ")")
        params += list(filters.types)
    if filters.topic:
        clauses.append("e.topic = %s")
        params.append(filters.topic)
    if filters.generation:
        clauses.append("LOWER(e.generations) LIKE %s")
        params.append(f"%|{filters.generation.lower()}|%")
    return "".join(f" AND {c}" for c in clauses), params


class _Postgres:
    name = "postgresql"

    def run(
        self, text: str, filters: Filters, limit: int, offset: int
    ) -> tuple[list[Hit], list[tuple[str, str, str]]]:
        from django.contrib.postgres.search import (
            SearchHeadline,
            SearchQuery,
            SearchRank,
            SearchVectorField,
        )

        groups, _excluded = parse_query(text)
        if not groups:
            return [], []
        query = SearchQuery(text, search_type="websearch", config=PG_CONFIG)
        # The stored, weighted tsvector of migration 0002 (GIN-indexed; unknown to the model).
        document = RawSQL(
            '"knowledge_searchentry"."search_document"', [], output_field=SearchVectorField()
        )
        matches = SearchEntry.objects.annotate(document=document).filter(document=query)
        rows = [
            tuple(r)
            for r in matches.order_by().values_list("source", "topic", "generations")[
                :MAX_FACET_ROWS
            ]
        ]
        page = (
            matches.filter(filters.q())
            .annotate(
                score=SearchRank(document, query),
                title_hl=SearchHeadline(
                    "title",
                    query,
                    config=PG_CONFIG,
                    start_sel=START,
                    stop_sel=STOP,
                    highlight_all=True,
                ),
                snip=SearchHeadline(
                    "body",
                    query,
                    config=PG_CONFIG,
                    start_sel=START,
                    stop_sel=STOP,
                    max_words=SNIPPET_WORDS,
                    min_words=12,
                ),
            )
            .order_by("-score", "id")
            .values_list(*_COLUMNS, "score", "title_hl", "snip")[offset : offset + limit]
        )
        n = len(_COLUMNS)
        hits = [_hit(r[:n], float(r[n]), r[n + 1], r[n + 2]) for r in page]
        return hits, rows


class _Substring:
    """Any other database: unranked substring matching, newest first."""

    name = "substring"

    def run(
        self, text: str, filters: Filters, limit: int, offset: int
    ) -> tuple[list[Hit], list[tuple[str, str, str]]]:
        groups, _excluded = parse_query(text)
        if not groups:
            return [], []
        condition = Q()
        for group in groups:
            either = Q()
            for phrase in group:
                either |= (
                    Q(title__icontains=phrase)
                    | Q(body__icontains=phrase)
                    | Q(keywords__icontains=phrase)
                )
            condition &= either
        matches = SearchEntry.objects.filter(condition)
        rows = [tuple(r) for r in matches.values_list("source", "topic", "generations")]
        found = matches.filter(filters.q()).order_by("-updated_at", "-id")[offset : offset + limit]
        first = groups[0][0]
        hits = [
            _hit(
                [getattr(e, c) for c in _COLUMNS],
                0.0,
                _mark(e.title, first),
                _mark(_around(e.body, first), first),
            )
            for e in found
        ]
        return hits, rows


def _around(body: str, phrase: str) -> str:
    at = body.lower().find(phrase.lower())
    start = max(0, at - 80) if at >= 0 else 0
    return ("…" if start else "") + body[start : start + 240]


def _mark(text: str, phrase: str) -> str:
    return re.sub(re.escape(phrase), lambda m: START + m.group(0) + STOP, text, flags=re.I)


def _engine() -> _SqliteFts | _Postgres | _Substring:
    if connection.vendor == "postgresql":
        return _Postgres()
    if connection.vendor == "sqlite" and _has_fts_table():
        return _SqliteFts()
    return _Substring()


def _has_fts_table() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE name = %s", [FTS_TABLE])
        return cursor.fetchone() is not None
