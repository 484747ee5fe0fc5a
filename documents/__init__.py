"""Document machinery every app that keeps Markdown text shares, below all apps
(docs/architecture.md): ``markdown`` (rendering and sanitizing what users write), ``embeds``
(the shortcode registry: pin, render), ``pinning`` (the abstract row of a pinned embed),
``merge`` (three-way merge of concurrent edits) and ``diffs`` (differences between two
versions). It knows no app: apps register their embed kinds and keep their own rows.
"""
