"""Change-point detection methods, one per module; ``baselines.detect`` combines them.

- ``robust``: location/scale estimates that survive spikes, steps and drift.
- ``seasonal``: a repeating pattern (weekly rhythm of nightly runs): found and taken out.
- ``noise``: AR(1)-like correlation of the noise and its long-run factor.
- ``drift``: piecewise-linear segmentation (PELT, line cost) and the drifts it shows.
- ``variance_scan``: variance-only / bimodal changes (windowed scale-ratio scan + rank test).
- ``hampel``: isolated spikes (1-2 points) → outliers, replaced by the local median.
- ``pelt``: optimal segmentation (penalised weighted least squares) proposing step candidates.
- ``step_test``: windowed robust z-test, magnitude floor, drift check and jump-not-bend check
  deciding which candidates are real steps.

Everything here is pure numpy: no Django, no scipy.
"""
