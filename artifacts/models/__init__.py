"""Models of the artifacts app, one module per evidence family.

core: raw files and nccl-tests runs. Other modules (traces, fabric) add their typed evidence;
each is imported here so Django sees every model under the ``artifacts`` app label.
"""

from .core import Artifact, BenchmarkRun, Measurement, RunRank

__all__ = ["Artifact", "BenchmarkRun", "Measurement", "RunRank"]
