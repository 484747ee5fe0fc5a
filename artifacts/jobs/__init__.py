"""Jobs: the unit evidence shares facts within (one nccl-tests invocation, one training job's
ranks, one Slurm/Kubernetes job). See docs/baselines.md, "Facts belong to their evidence"."""
