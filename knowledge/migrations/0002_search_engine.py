"""Full-text search for knowledge.SearchEntry, in the engine of the database at hand.

SQLite: an FTS5 table over (title, body, keywords) with external content, kept in sync by triggers, so
every insert/update/delete of an entry (ORM, bulk, raw SQL) reaches the index.
PostgreSQL: a stored generated column ``search_document`` (title weighted A, body and keywords
weighted B) with a GIN index; the Django model does not know the column, knowledge/search.py
reads it by name.
Other databases get nothing (search falls back to substring matching).
"""

from django.db import migrations

FTS = "knowledge_searchentry_fts"
SQLITE_FORWARD = [
    f"CREATE VIRTUAL TABLE {FTS} USING fts5(title, body, keywords, content='knowledge_searchentry', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
    f"CREATE TRIGGER {FTS}_ai AFTER INSERT ON knowledge_searchentry BEGIN "
    f"INSERT INTO {FTS}(rowid, title, body, keywords) "
    "VALUES (new.id, new.title, new.body, new.keywords); END",
    f"CREATE TRIGGER {FTS}_ad AFTER DELETE ON knowledge_searchentry BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, title, body, keywords) "
    "VALUES ('delete', old.id, old.title, old.body, old.keywords); END",
    f"CREATE TRIGGER {FTS}_au AFTER UPDATE ON knowledge_searchentry BEGIN "
    f"INSERT INTO {FTS}({FTS}, rowid, title, body, keywords) "
    "VALUES ('delete', old.id, old.title, old.body, old.keywords); "
    f"INSERT INTO {FTS}(rowid, title, body, keywords) "
    "VALUES (new.id, new.title, new.body, new.keywords); END",
    f"INSERT INTO {FTS}({FTS}) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    f"DROP TRIGGER IF EXISTS {FTS}_ai",
    f"DROP TRIGGER IF EXISTS {FTS}_ad",
    f"DROP TRIGGER IF EXISTS {FTS}_au",
    f"DROP TABLE IF EXISTS {FTS}",
]
PG_FORWARD = [
    # Stored, so ranking reads a ready tsvector instead of parsing every matching document.
    "ALTER TABLE knowledge_searchentry ADD COLUMN search_document tsvector GENERATED ALWAYS AS ("
    "setweight(to_tsvector('english'::regconfig, COALESCE(title, '')), 'A') || "
    "setweight(to_tsvector('english'::regconfig, COALESCE(body, '') || ' ' || "
    "COALESCE(keywords, '')), 'B')) STORED",
    "CREATE INDEX knowledge_searchentry_tsv ON knowledge_searchentry USING gin (search_document)",
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS knowledge_searchentry_tsv",
    "ALTER TABLE knowledge_searchentry DROP COLUMN IF EXISTS search_document",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": PG_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": PG_BACKWARD}),
        )
    ]
