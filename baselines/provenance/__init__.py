"""Where a run's facts come from: which evidence describes it (``host_facts``: same file,
same job, same host), the record of every stated value (``entries``), a person's
detachment of a wrong source (``detaching``) and the repair of what was filed before these
rules (``repair``). See docs/baselines.md, "Facts belong to their evidence"."""
