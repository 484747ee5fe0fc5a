"""Models of the artifacts app, one module per evidence family.

core: raw files and nccl-tests runs. Other modules (traces, fabric) add their typed evidence;
each is imported here so Django sees every model under the ``artifacts`` app label.
"""

from .bundles import BundleMember
from .core import Artifact, BenchmarkRun, Measurement, RunRank
from .fabric import CounterRate, CounterSample, CounterSnapshot, Finding, HostFact, LogEvent
from .nsight import (
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
)
from .traces import TraceCollective, TraceKernelStat, TraceStep, TraceSummary

__all__ = ["Artifact", "BenchmarkRun", "Measurement", "RunRank"]
__all__ += ["CounterRate", "CounterSample", "CounterSnapshot", "Finding", "HostFact", "LogEvent"]
__all__ += ["TraceCollective", "TraceKernelStat", "TraceStep", "TraceSummary"]
__all__ += ["NcuKernel", "NsightApiStat", "NsightKernelStat", "NsightMemStat", "NsightRange"]
__all__ += ["NsightReport"]
__all__ += ["BundleMember"]
