#!/usr/bin/env bash
# Capture real evidence on a GPU machine with the project's own scripts: a PyTorch Profiler
# trace of a small training step, `ncu --csv` (and text) of its kernels, its NCCL_DEBUG=INFO
# log, and nvidia-smi / host snapshots. Everything lands in one folder and one tar.gz.
#   bash scripts/capture/gpu_evidence.sh OUT_DIR
# Each step is bounded in time and may fail alone (a tool missing on the machine).
set -u
out=${1:?usage: gpu_evidence.sh OUT_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
step() {  # step NAME SECONDS COMMAND...: stdout to NAME, stderr to NAME.err
    local name=$1 seconds=$2; shift 2
    echo "== $name: $*"
    timeout "$seconds" "$@" >"$out/$name" 2>"$out/$name.err"
    echo "   exit $? ($(wc -c <"$out/$name") bytes)"
}
step nvidia_smi_q.txt 30 nvidia-smi -q
step nvidia_smi_topo_m.txt 20 nvidia-smi topo -m
step nvidia_smi_query.csv 20 nvidia-smi --format=csv \
    --query-gpu=index,name,uuid,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,temperature.gpu,power.draw,clocks.sm,clocks.mem,utilization.gpu,memory.used,memory.total
step nvidia_smi_dmon.txt 20 nvidia-smi dmon -c 5
step nvidia_smi_q.xml 30 nvidia-smi -q -x
step nvidia_smi.txt 20 nvidia-smi
step nvidia_smi_q_performance.txt 20 nvidia-smi -q -d PERFORMANCE,CLOCK,POWER
step nvidia_smi_nvlink.txt 20 nvidia-smi nvlink --status
step nvidia_smi_q_ecc.txt 20 nvidia-smi -q -d ECC,ROW_REMAPPER,PCIE
step nvidia_smi_topo_p2p_r.txt 20 nvidia-smi topo -p2p r
# every dmon group, dated, sampled while the training step below runs
timeout 150 nvidia-smi dmon -s pucvmet -o DT -c 40 >"$out/nvidia_smi_dmon_all.txt" 2>&1 &
dmon=$!
step proc_interrupts.txt 5 cat /proc/interrupts
step sysctl_a.txt 10 sysctl -a
step dmesg.txt 5 dmesg
step lscpu.txt 5 lscpu
step train_step.log 120 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,NET,GRAPH,ENV \
    "$py" "$here/train_step.py" --trace "$out/torch_trace_train_step.json"
wait "$dmon"
step ncu_train_step.csv 180 ncu --csv --clock-control none --launch-count 40 \
    "$py" "$here/train_step.py" --steps 1
step ncu_train_step.txt 90 ncu --clock-control none --launch-count 6 \
    "$py" "$here/train_step.py" --steps 1
step ncu_full.csv 150 ncu --csv --set full --clock-control none --launch-count 3 \
    "$py" "$here/train_step.py" --steps 1
step ncu_full.txt 150 ncu --set full --clock-control none --launch-count 2 \
    "$py" "$here/train_step.py" --steps 1
step ncu_summary.csv 90 ncu --csv --print-summary per-kernel --clock-control none \
    --launch-count 12 "$py" "$here/train_step.py" --steps 1
step ncu_train_step_raw.csv 90 ncu --csv --page raw --clock-control none --launch-count 6 \
    "$py" "$here/train_step.py" --steps 1
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
ls -l "$out" "$out.tar.gz"
