#!/usr/bin/env bash
# Run the verify suite on the device machine (issues 7 and 8), as ONE command:
#
#   bash benchmarks/device_verify.sh                 # whole suite; report in $OUT/verify.json
#   bash benchmarks/device_verify.sh --only comm     # extra flags go to python -m rocmforge.verify
#
# The device image has CUDA PyTorch and Triton in its python3 and no registry access, so nothing
# is installed: PYTHONPATH makes the checkout's rocmforge importable (verify needs only the
# standard library, torch and triton). NVLink multicast stays off (device/KINDS.md), here and in
# every process comm starts. With two or more GPUs it also proves the dying-process path: rank 1
# exits before its first collective and comm must FAIL with that message, not hang
# ($OUT/verify-comm-fault.json).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/benchmarks/out}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NO_COLOR=1
PY="${PYTHON:-python3}"

nvidia-smi -L 2>/dev/null || true
"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__,
"cuda", torch.version.cuda, "devices", torch.cuda.device_count())'

rc=0
start=$(date +%s.%N)
"$PY" -m rocmforge.verify --device cuda --json "$OUT/verify.json" "$@" || rc=$?
end=$(date +%s.%N)
echo "suite exit code $rc, wall $("$PY" -c "print(round($end - $start, 1))") s (process, torch import included)"

devices=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
if [ "$devices" -ge 2 ]; then
  fault_rc=0
  "$PY" -m rocmforge.verify --device cuda --only comm --comm-sizes 1KiB --comm-timeout 30 \
    --comm-fault exit:1 --json "$OUT/verify-comm-fault.json" || fault_rc=$?
  echo "dying-process run exit code $fault_rc (expected 1: comm FAIL naming rank 1)"
fi

# The figures the closing notes need, in a few lines.
"$PY" - "$OUT/verify.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
print("schema", doc["schema"], "wall_s", doc["wall_s"], "summary", doc["summary"])
for check in doc["checks"]:
    print(f"{check['name']:10} {check['status']:5} {check['seconds']:6.1f}s  {check['reason']}")
    figures = check["figures"]
    if check["name"] == "perf":
        keys = ("gemm_bf16_tflops", "gemm_fp16_tflops", "copy_gbs", "fraction_of_peak", "peak")
        print("   ", {k: figures.get(k) for k in keys})
    if check["name"] == "comm":
        for op, rows in figures.get("bandwidth", {}).items():
            print("   ", op, [(r["size"], r["busbw_gbs"]) for r in rows])
PYEOF
exit "$rc"
