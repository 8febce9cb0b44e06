"""Check `comm`: collectives across processes give exact results, and a broken run ends.

Owns: starting one worker process per device (this module run with `-m`, so workers share no
state with the parent), watching them under a deadline, and turning what they report into a
verdict with bus bandwidth per size. Backend: NCCL on GPUs (RCCL on ROCm builds), gloo with two
processes for `--device cpu`. Operations: all_reduce (sum), all_gather, broadcast (root 0), and a
send/recv ring (batch_isend_irecv), for each message size and dtype; data are small integers so
every result is exact in every dtype (the largest value, 13 * W + W(W+1)/2, stays under 256 for
W <= 8, exact even in bfloat16).

Bandwidth follows nccl-tests (doc/PERFORMANCE.md): algbw = bytes / time, and busbw = algbw *
2(n-1)/n for all_reduce, (n-1)/n for all_gather (bytes = the gathered output), 1 for broadcast
and send/recv. Times are the slowest rank's mean over the timed repeats.

Every worker gets NVLink multicast switched off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1: the device machines' rule, because
multicast can take a shared host's GPUs out of service), whatever the caller's environment says.

A worker that dies makes the check FAIL naming the rank, its exit code and where it was; a run
that makes no progress (no rank reports a new phase) for the timeout is killed and FAILs naming
each rank's last phase. No hang.
Must not: kill any process it did not start.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

from rocmforge.verify.checks import CheckContext, result
from rocmforge.verify.model import CheckResult, Status, human_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

    import torch as _torch


class CommRecord(TypedDict, total=False):
    """One operation a rank ran: exact or not, and (timed dtype only) its mean seconds."""

    op: str
    dtype: str
    bytes: int
    exact: bool
    seconds: float


class RankReport(TypedDict):
    """rank<N>.json, what one worker wrote."""

    rank: int
    records: list[CommRecord]


class BandwidthRow(TypedDict):
    bytes: int
    size: str
    time_us: float
    algbw_gbs: float
    busbw_gbs: float


class CommSummary(TypedDict):
    """The ranks merged: how many records were checked, which were inexact, bandwidth per op."""

    checked: int
    mismatches: list[str]
    bandwidth: dict[str, list[BandwidthRow]]

NAME = "comm"

OPS = ("all_reduce", "all_gather", "broadcast", "send_recv")
DTYPES = ("float32", "bfloat16", "int32")
# Bandwidth is timed in the first dtype only; the others are checked for exactness.
TIMED_DTYPE = "float32"
ELEMENT_SIZE = {"float32": 4, "bfloat16": 2, "int32": 4, "float16": 2}
PATTERN_PERIOD = 13

# Set in every worker, overriding the caller's environment (device/KINDS.md).
MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}
# Importing torch prints nothing for several seconds (10+ on a loaded two-core machine): until
# every rank has passed it, the no-progress deadline is at least this long.
STARTUP_S = 60.0
STARTUP_PHASES = ("not started", "starting (importing torch)", "import torch")
# Seconds the other ranks get to finish (usually with their own error) once one has died.
GRACE_S = 2.0


def bus_factor(op: str, world: int) -> float:
    """nccl-tests' busbw / algbw ratio for an operation on `world` ranks."""
    if op == "all_reduce":
        return 2 * (world - 1) / world
    if op == "all_gather":
        return (world - 1) / world
    return 1.0


def worker_env(base: dict[str, str], *, rank: int, world: int, port: int,
               package_root: str) -> dict[str, str]:
    """The environment of one worker: rendezvous, rank, multicast off, our package importable."""
    env = dict(base)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
               LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    env.update(MULTICAST_OFF)
    # Let a stuck NCCL collective raise instead of blocking forever (the deadline still rules).
    env.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = package_root + (os.pathsep + path if path else "")
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, kw_only=True)
class LaunchOutcome:
    """What the parent saw: per-rank results (when all succeeded) or why the run failed."""

    ok: bool
    message: str
    reports: tuple[RankReport, ...] = ()
    wall_s: float = 0.0


def last_phase(stdout_path: Path) -> str:
    try:
        lines = stdout_path.read_text(errors="replace").splitlines()
    except OSError:
        return "not started"
    phases = [ln[6:] for ln in lines if ln.startswith("PHASE ")]
    return phases[-1] if phases else "starting (importing torch)"


def stderr_tail(path: Path, lines: int = 3) -> str:
    try:
        text = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return " | ".join(ln.strip() for ln in text[-lines:])[:600]


def launch(*, world: int, backend: str, sizes: tuple[int, ...], dtypes: tuple[str, ...],
           timeout_s: float, fault: str = "", workdir: Path) -> LaunchOutcome:
    """Start `world` workers, wait for all of them or the deadline, never longer."""
    package_root = str(Path(__file__).resolve().parents[3])
    port = free_port()
    config = {"backend": backend, "sizes": list(sizes), "dtypes": list(dtypes),
              "timeout_s": timeout_s, "fault": fault, "workdir": str(workdir)}
    config_path = workdir / "config.json"
    config_path.write_text(json.dumps(config))
    procs: list[subprocess.Popen[bytes]] = []
    files = []
    started = time.monotonic()
    for rank in range(world):
        out = open(workdir / f"rank{rank}.out", "wb")  # noqa: SIM115 - closed below
        err = open(workdir / f"rank{rank}.err", "wb")  # noqa: SIM115 - closed below
        files += [out, err]
        env = worker_env(dict(os.environ), rank=rank, world=world, port=port,
                         package_root=package_root)
        argv = [sys.executable, "-m", "rocmforge.verify.checks.comm", "--worker",
                str(config_path)]
        procs.append(subprocess.Popen(argv, env=env, stdout=out, stderr=err,
                                      stdin=subprocess.DEVNULL))
    died: list[tuple[int, int]] = []  # (rank, exit code) in the order we saw them die
    first_death = 0.0
    timed_out = False
    outputs = [workdir / f"rank{rank}.out" for rank in range(world)]
    progress, last_progress, starting = -1, started, True
    try:
        while True:
            codes = [p.poll() for p in procs]
            for rank, code in enumerate(codes):
                if code not in (None, 0) and all(r != rank for r, _ in died):
                    died.append((rank, code))
                    first_death = first_death or time.monotonic()
            if all(code is not None for code in codes):
                break
            now = time.monotonic()
            if died and now - first_death > GRACE_S:
                break
            # The deadline counts from the last sign of progress (a PHASE line from any rank),
            # so slow process start-up on a loaded machine is not mistaken for a hang.
            seen = sum(path.stat().st_size for path in outputs if path.exists())
            if seen != progress:
                progress, last_progress = seen, now
                starting = any(last_phase(path) in STARTUP_PHASES for path in outputs)
            allowed = max(timeout_s, STARTUP_S) if starting else timeout_s
            if now - last_progress > allowed:
                timed_out = True
                break
            time.sleep(0.05)
    finally:
        phases = [last_phase(path) for path in outputs]
        killed = []
        for rank, proc in enumerate(procs):
            if proc.poll() is None:
                proc.kill()  # only our own children, by their Popen handle
                killed.append(rank)
        for proc in procs:
            proc.wait()
        for handle in files:
            handle.close()
    wall = time.monotonic() - started
    stopped = f"; stopped rank(s) {', '.join(map(str, killed))}" if killed else ""
    if died:
        rank, code = died[0]
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        detail = stderr_tail(workdir / f"rank{rank}.err")
        others = [f"rank {r} exited with code {c}" for r, c in died[1:]]
        message = (f"rank {rank} {how} during {phases[rank]}"
                   + (f" ({detail})" if detail else "")
                   + (f"; then {', '.join(others)}" if others else "") + stopped
                   + f"; {wall:.1f} s after start")
        return LaunchOutcome(ok=False, message=message, wall_s=wall)
    if timed_out:
        where = "; ".join(f"rank {r} at {phases[r]}" for r in range(world))
        message = (f"timed out: no progress for {timeout_s:g} s ({where}){stopped}; "
                   "a collective that never completes means a peer is stuck or a link is down "
                   "(rerun with NCCL_DEBUG=INFO)")
        return LaunchOutcome(ok=False, message=message, wall_s=wall)
    reports: list[RankReport] = []
    for rank in range(world):
        path = workdir / f"rank{rank}.json"
        try:
            reports.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            return LaunchOutcome(ok=False, wall_s=wall,
                                 message=f"rank {rank} exited 0 but wrote no report")
    return LaunchOutcome(ok=True, message="", reports=tuple(reports), wall_s=wall)


def summarize(reports: tuple[RankReport, ...], world: int) -> CommSummary:
    """Merge per-rank records: mismatches, and per op and size the slowest rank's bandwidth."""
    mismatches: list[str] = []
    checked = 0
    slowest: dict[tuple[str, int], float] = {}
    for report in reports:
        for record in report["records"]:
            checked += 1
            if not record["exact"]:
                mismatches.append(f"rank {report['rank']} {record['op']} {record['dtype']} "
                                  f"{human_bytes(record['bytes'])}")
            if record.get("seconds"):
                key = (record["op"], record["bytes"])
                slowest[key] = max(slowest.get(key, 0.0), record["seconds"])
    bandwidth: dict[str, list[BandwidthRow]] = {}
    for (op, size), seconds in sorted(slowest.items(), key=lambda kv: (OPS.index(kv[0][0]),
                                                                        kv[0][1])):
        algbw = size / seconds / 1e9
        bandwidth.setdefault(op, []).append({
            "bytes": size, "size": human_bytes(size), "time_us": round(seconds * 1e6, 1),
            "algbw_gbs": round(algbw, 3), "busbw_gbs": round(algbw * bus_factor(op, world), 3),
        })
    return {"checked": checked, "mismatches": mismatches, "bandwidth": bandwidth}


def run(ctx: CheckContext) -> CheckResult:
    torch = ctx.torch
    options = ctx.options
    try:
        import torch.distributed as dist
        distributed = dist.is_available()
    except ImportError:
        distributed = False
    if not distributed:
        return result(NAME, Status.SKIP, "this torch was built without torch.distributed")
    if ctx.on_gpu:
        if not torch.cuda.is_available():
            return result(NAME, Status.SKIP, ctx.gpu_missing_reason())
        count = torch.cuda.device_count()
        if count < 2:
            return result(NAME, Status.SKIP,
                          f"one process per device needs two or more devices; {count} visible",
                          device_count=count)
        if not dist.is_nccl_available():
            return result(NAME, Status.FAIL, "GPU build without the NCCL/RCCL backend "
                          "(torch.distributed.is_nccl_available() is False)")
        backend = "nccl"
        world = min(options.comm_world_size or count, count)
    else:
        backend = "gloo"
        world = options.comm_world_size or 2
    sizes = options.sizes_for_comm()
    timeout = options.timeout_for_comm()
    figures: dict[str, Any] = {
        "backend": backend + (" (RCCL)" if backend == "nccl" and torch.version.hip else ""),
        "world_size": world, "sizes": [human_bytes(s) for s in sizes], "dtypes": list(DTYPES),
        "timed_dtype": TIMED_DTYPE, "timeout_s": timeout, "worker_env": dict(MULTICAST_OFF),
    }
    with tempfile.TemporaryDirectory(prefix="rocmforge-comm-") as tmp:
        outcome = launch(world=world, backend=backend, sizes=sizes, dtypes=DTYPES,
                         timeout_s=timeout, fault=options.comm_fault, workdir=Path(tmp))
    figures["wall_s"] = round(outcome.wall_s, 2)
    if not outcome.ok:
        return result(NAME, Status.FAIL, f"{backend}: {outcome.message}", **figures)
    summary = summarize(outcome.reports, world)
    figures.update(summary)
    if summary["mismatches"]:
        return result(NAME, Status.FAIL,
                      f"inexact results: {'; '.join(summary['mismatches'][:5])}", **figures)
    peak = max((row["busbw_gbs"] for rows in summary["bandwidth"].values() for row in rows),
               default=0.0)
    return result(NAME, Status.PASS,
                  f"{backend}, {world} processes: {', '.join(OPS)} exact for "
                  f"{len(sizes)} sizes x {len(DTYPES)} dtypes; peak busbw {peak:.1f} GB/s",
                  **figures)


# ----------------------------------------------------------------------------- worker side


def phase(text: str) -> None:
    sys.stdout.write(f"PHASE {text}\n")
    sys.stdout.flush()


def worker(config_path: str) -> int:
    """One rank: run every operation, check it exactly, time it, write rank<N>.json."""
    from datetime import timedelta

    config = json.loads(Path(config_path).read_text())
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    phase("import torch")
    import torch
    import torch.distributed as dist

    backend = config["backend"]
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        torch.set_num_threads(1)
        device = torch.device("cpu")
    phase("init_process_group")
    # Longer than the parent's no-progress deadline, so the parent's clear message comes first.
    kwargs: dict[str, Any] = {"timeout": timedelta(seconds=2 * config["timeout_s"] + 10)}
    if backend == "nccl":
        kwargs["device_id"] = device
    try:
        dist.init_process_group(backend, rank=rank, world_size=world, **kwargs)
    except TypeError:  # torch without device_id
        kwargs.pop("device_id", None)
        dist.init_process_group(backend, rank=rank, world_size=world, **kwargs)

    fault = config.get("fault", "")
    if fault:
        kind, _, target = fault.partition(":")
        if target == str(rank):
            phase(f"injected fault {kind}")
            if kind == "exit":
                os._exit(17)
            if kind == "hang":
                time.sleep(10**6)

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def pattern(count: int, dtype: Any, owner: int) -> Any:
        values = torch.arange(count, device=device, dtype=torch.int64) % PATTERN_PERIOD
        return (values + owner + 1).to(dtype)

    records = []
    slow_cuda = device.type == "cuda"
    for dtype_name in config["dtypes"]:
        dtype = getattr(torch, dtype_name)
        elem = ELEMENT_SIZE[dtype_name]
        for size in config["sizes"]:
            for op in OPS:
                phase(f"{op} {dtype_name} {human_bytes(size)}")
                # all_gather's size is its output (nccl-tests): each rank gives size / world.
                per_rank = size // (world * elem) if op == "all_gather" else size // elem
                count = max(per_rank, 1)
                mine = pattern(count, dtype, rank)
                if op == "all_reduce":
                    dist.all_reduce(mine)
                    expected = pattern(count, torch.int64, 0) * world - 1 * world + sum(
                        r + 1 for r in range(world))
                    exact = bool(torch.equal(mine.to(torch.int64), expected))
                    moved = count * elem
                elif op == "all_gather":
                    parts = [torch.empty_like(mine) for _ in range(world)]
                    dist.all_gather(parts, mine)
                    exact = all(torch.equal(p, pattern(count, dtype, r))
                                for r, p in enumerate(parts))
                    moved = count * elem * world
                elif op == "broadcast":
                    buf = mine if rank == 0 else torch.zeros_like(mine)
                    dist.broadcast(buf, src=0)
                    exact = bool(torch.equal(buf, pattern(count, dtype, 0)))
                    moved = count * elem
                else:
                    got = torch.empty_like(mine)
                    ops = [dist.P2POp(dist.isend, mine, (rank + 1) % world),
                           dist.P2POp(dist.irecv, got, (rank - 1) % world)]
                    for request in dist.batch_isend_irecv(ops):
                        request.wait()
                    sync()
                    exact = bool(torch.equal(got, pattern(count, dtype, (rank - 1) % world)))
                    moved = count * elem
                record: dict[str, Any] = {"op": op, "dtype": dtype_name, "bytes": moved,
                                          "exact": exact}
                del mine
                if dtype_name == TIMED_DTYPE:
                    record["seconds"] = time_op(torch, dist, op, count, dtype, device, world,
                                                rank, sync, slow_cuda, size)
                records.append(record)
    phase("done")
    dist.barrier()
    dist.destroy_process_group()
    out = Path(config["workdir"]) / f"rank{rank}.json"
    out.write_text(json.dumps({"rank": rank, "records": records}))
    return 0


def time_op(torch: ModuleType, dist: ModuleType, op: str, count: int, dtype: _torch.dtype,
            device: _torch.device, world: int, rank: int, sync: Callable[[], None],
            on_gpu: bool, size: int) -> float:
    """Mean seconds of one operation on zeros (value-independent cost, no overflow)."""
    buf = torch.zeros(count, dtype=dtype, device=device)
    parts = [torch.empty_like(buf) for _ in range(world)] if op == "all_gather" else []
    got = torch.empty_like(buf) if op == "send_recv" else None

    def once() -> None:
        if op == "all_reduce":
            dist.all_reduce(buf)
        elif op == "all_gather":
            dist.all_gather(parts, buf)
        elif op == "broadcast":
            dist.broadcast(buf, src=0)
        else:
            ops = [dist.P2POp(dist.isend, buf, (rank + 1) % world),
                   dist.P2POp(dist.irecv, got, (rank - 1) % world)]
            for request in dist.batch_isend_irecv(ops):
                request.wait()

    if on_gpu:
        warmup, repeats = 2, max(5, min(20, (1 << 30) // max(size, 1)))
    else:
        warmup, repeats = 1, 3
    for _ in range(warmup):
        once()
    sync()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(repeats):
        once()
    sync()
    return (time.perf_counter() - start) / repeats


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        try:
            sys.exit(worker(sys.argv[2]))
        except Exception as exc:  # noqa: BLE001 - reported to the parent through stderr
            import traceback

            traceback.print_exc()
            sys.stderr.write(f"rank failed: {type(exc).__name__}: {exc}\n")
            sys.exit(1)
    sys.stderr.write("usage: python -m rocmforge.verify.checks.comm --worker CONFIG.json\n")
    sys.exit(2)
