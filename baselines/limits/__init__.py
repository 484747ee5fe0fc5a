"""Hardware limits and efficiency: "is this number good?" (docs/efficiency.md).

Pure modules (no Django): ``datasheet`` (vendor numbers with sources), ``links`` (what the
hosts' evidence says about their links), ``model`` (limits and the bound of a collective on
a topology), ``efficiency`` (measured as % of the peak). Database reads live in ``reads``
(one run, one profile); stored findings in ``findings``.
"""
