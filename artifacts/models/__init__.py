"""Models of the artifacts app: the core ``Artifact`` and every evidence family's models.

Django discovers models through this module, so each family's ``models`` module is imported
here and all of them live under the one ``artifacts`` app label (one migration history, the
tables keep their names). New code imports a model from its family module.
"""

from artifacts.bundles.models import BundleMember
from artifacts.fabric.models import (
    CounterRate,
    CounterSample,
    CounterSnapshot,
    Finding,
    HostFact,
    LogEvent,
)
from artifacts.jobs.models import Job, JobMember
from artifacts.models.core import Artifact
from artifacts.nsight.models import (
    NcuKernel,
    NsightApiStat,
    NsightKernelStat,
    NsightMemStat,
    NsightRange,
    NsightReport,
)
from artifacts.runs.models import BenchmarkRun, Measurement, RunRank
from artifacts.traces.models import TraceCollective, TraceKernelStat, TraceStep, TraceSummary

__all__ = ["Artifact", "BenchmarkRun", "Measurement", "RunRank"]
__all__ += ["CounterRate", "CounterSample", "CounterSnapshot", "Finding", "HostFact", "LogEvent"]
__all__ += ["TraceCollective", "TraceKernelStat", "TraceStep", "TraceSummary"]
__all__ += ["NcuKernel", "NsightApiStat", "NsightKernelStat", "NsightMemStat", "NsightRange"]
__all__ += ["NsightReport"]
__all__ += ["BundleMember", "Job", "JobMember"]
