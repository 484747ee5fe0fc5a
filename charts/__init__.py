"""Figure specs every page and export draws from, below all apps (docs/architecture.md).

``figures``: plotly figures (interactive pages, report exports, embeds) built from plain
frames and dicts; ``svg``: dependency-free SVG charts for self-contained exports and
evidence bundles. Neither reads the database nor imports an app: callers pass the numbers.
"""
