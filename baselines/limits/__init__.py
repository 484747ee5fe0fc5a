"""Hardware limits read from the database (docs/efficiency.md): ``reads`` (one run, one
profile), ``findings`` (stored efficiency findings), ``matrix_cells`` (the version matrix's
% of peak). The pure model they apply lives in ``hardware/``.
"""
