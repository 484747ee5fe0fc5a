"""What the hardware can do, below all apps (docs/architecture.md, docs/efficiency.md). Pure.

``gpus`` (GPU model and generation from a printed name), ``datasheet`` (vendor numbers with
their sources), ``links`` (what the hosts' evidence says about their links), ``model`` (the
limits and the bound of a collective on a topology), ``efficiency`` (measured as % of the
peak), ``evidence`` (the plain rows the findings rules read) and ``checks`` (the efficiency
and link-rate rule checks). Reads of the database live in the apps that own the tables
(``baselines/limits/``: one run, one profile, stored findings).
"""
