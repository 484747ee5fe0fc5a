"""Change-point detection methods, one per module; ``baselines.detect`` combines them.

- ``robust``: location/scale estimates that survive spikes, steps and drift.
- ``variance_scan``: variance-only / bimodal changes (windowed scale-ratio scan + rank test).
- ``hampel``: isolated spikes (1-2 points) → outliers, replaced by the local median.
- ``pelt``: optimal segmentation (penalised weighted least squares) proposing step candidates.
- ``step_test``: windowed robust z-test, magnitude floor and drift check deciding which
  candidates are real steps.

Everything here is pure numpy: no Django, no scipy.
"""
