"""Code per target in the ROCm libraries torch links (issue 31 item 2): Debian's real
librocsparse.so.0 and librocrand.so.1 (code for gfx803-gfx1030, none for gfx1100), and an install
tree laid out as rocBLAS, hipBLASLt and MIOpen install their kernel files, with code objects
compiled here by clang-22 for the targets the files name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing_real_part

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.targets import TargetId
from rocmforge.plan.kernel_rows import kernel_rows
from rocmforge.probes.library_code import probe_library_code, targets_in_names

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLE = load_arch_table()
KNOWN = frozenset(TABLE.names())
DEBIAN = Path("/usr/lib/x86_64-linux-gnu")


def _rows(found, *targets: str) -> dict[str, tuple[str, str, str]]:
    return {r.check: (r.status, r.detail, r.fix)
            for r in kernel_rows(found, [TargetId(t) for t in targets], TABLE)}


def test_debians_rocsparse_and_rocrand_have_no_gfx1100_code(tmp_path: Path, monkeypatch) -> None:
    if not (DEBIAN / "librocsparse.so.0").exists() or not (DEBIAN / "librocrand.so.1").exists():
        missing_real_part("Debian's librocsparse0 and librocrand1 (see .ci/run)")
    monkeypatch.setenv("ROCMFORGE_CACHE_DIR", str(tmp_path / "cache"))
    found = probe_library_code(Path("/usr"), known=KNOWN, environ={})
    by_name = {f.library.name: f for f in found}
    assert set(by_name) >= {"rocsparse", "rocrand"}
    for name in ("rocsparse", "rocrand"):
        assert by_name[name].targets == ("gfx1030", "gfx803", "gfx900", "gfx906", "gfx908",
                                         "gfx90a")
    rows = _rows(found, "gfx1100")
    status, detail, fix = rows["kernels rocsparse"]
    assert status == "FAIL" and detail.startswith(f"{(DEBIAN / 'librocsparse.so.0').resolve()} "
                                                  "holds code for gfx1030, gfx803")
    assert "none for gfx1100: sparse tensors" in detail
    assert 'cmake -DAMDGPU_TARGETS="gfx1100"' in fix
    # The way out names the pip SDK's multi-arch device extra for gfx1100 (config/rocm_sdk.toml).
    assert ("TheRock's pip SDK with its device-gfx1100 code: `--rocm-sdk-version` with a "
            "release from 7.13.0a0 on") in fix
    assert rows["kernels rocrand"][0] == "FAIL"
    assert {("kernels rocsparse", "OK"), ("kernels rocrand", "OK")} <= {
        (k, v[0]) for k, v in _rows(found, "gfx90a").items()}


def test_doctor_on_this_machine_fails_gfx1100_and_passes_gfx90a(tmp_path: Path) -> None:
    if not (DEBIAN / "librocsparse.so.0").exists():
        missing_real_part("Debian's librocsparse0 (see .ci/run)")
    env = {**os.environ, "HIP_PLATFORM": "amd", "ROCMFORGE_CACHE_DIR": str(tmp_path / "c")}

    def rows(arch: str) -> dict[str, str]:
        done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", arch,
                               "--json"], cwd=REPO_ROOT,
                              env=env, capture_output=True, text=True, timeout=300)
        doc = json.loads(done.stdout)
        return {r["check"]: r["status"] for r in doc["rows"] if r["check"].startswith("kernels")}

    assert rows("gfx1100") == {"kernels rocsparse": "FAIL", "kernels rocrand": "FAIL"}
    assert rows("gfx90a") == {"kernels rocsparse": "OK", "kernels rocrand": "OK"}


def _code_object(target: str, out: Path) -> None:
    """A real AMDGPU code object for `target`, compiled by clang-22 (no GPU needed)."""
    source = out.with_suffix(".hip")
    source.write_text("__attribute__((global)) void k(float* x) { x[0] += 1.0f; }\n")
    subprocess.run(["clang-22", "-x", "hip", f"--offload-arch={target}", "--cuda-device-only",
                    "-nogpuinc", "-nogpulib", "-O1", "-o", str(out), str(source)],
                   check=True, capture_output=True, timeout=120)
    source.unlink()


@pytest.mark.needs_tool("clang-22")
def test_tensile_and_kernel_database_folders_decide_their_targets(tmp_path: Path) -> None:
    root = tmp_path / "rocm-6.4.1"
    blas = root / "lib" / "rocblas" / "library"
    lt = root / "lib" / "hipblaslt" / "library"
    db = root / "share" / "miopen" / "db"
    for folder in (blas, lt, db):
        folder.mkdir(parents=True)
    for target in ("gfx90a", "gfx942"):
        _code_object(target, blas / f"Kernels.so-000-{target}.hsaco")
        _code_object(target, blas / f"TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_"
                                    f"Cijk_Dijk_{target}.co")
        (blas / f"TensileLibrary_lazy_{target}.dat").write_bytes(b"\x82")
    _code_object("gfx942", lt / "extop_gfx942.co")
    (lt / "TensileLibrary_lazy_gfx942.dat").write_bytes(b"\x82")
    (db / "gfx90a68.kdb").write_bytes(b"SQLite format 3\x00")
    (db / "gfx1030_36.kdb").write_bytes(b"SQLite format 3\x00")
    found = probe_library_code(root, known=KNOWN, environ={"ROCMFORGE_PROBE_CACHE": "0"})
    targets = {f.library.name: f.targets for f in found}
    assert targets == {"rocblas": ("gfx90a", "gfx942"), "hipblaslt": ("gfx942",),
                       "miopen": ("gfx1030", "gfx90a")}
    rows = _rows(found, "gfx1100", "gfx942")
    assert rows["kernels rocblas"][0] == "FAIL"  # required: matmuls on gfx1100 would fail
    assert "none for gfx1100: GEMMs" in rows["kernels rocblas"][1]
    # Optional, and the row claims no fallback: pytorch/pytorch#138067 shows addmm did not
    # switch to rocBLAS; the fix is the thread's run-time workaround.
    assert rows["kernels hipblaslt"][0] == "WARN"
    assert "falls back" not in rows["kernels hipblaslt"][1]
    assert "pytorch/pytorch#138067" in rows["kernels hipblaslt"][1]
    assert rows["kernels hipblaslt"][2].startswith(
        "export DISABLE_ADDMM_CUDA_LT=1 TORCH_BLAS_PREFER_HIPBLASLT=0   # at run time")
    assert rows["kernels miopen"][0] == "WARN"
    assert {k: v[0] for k, v in _rows(found, "gfx942").items()} == {
        "kernels rocblas": "OK", "kernels hipblaslt": "OK", "kernels miopen": "WARN"}


def test_a_generic_target_covers_its_members() -> None:
    from rocmforge.plan.kernel_rows import covered

    generic = next(a for a in TABLE.arches.values() if a.generic and "gfx1100" in
                   a.generic_members)
    assert covered("gfx1100", (generic.name,), TABLE)
    assert not covered("gfx1100", ("gfx1030",), TABLE)
    assert targets_in_names(["gfx90a68.kdb", "TensileLibrary_lazy_gfx1151.dat",
                             "gfx11-generic.co", "README"], KNOWN) == (
        "gfx11-generic", "gfx1151", "gfx90a")


def test_the_scan_is_kept_until_its_files_change(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ROCMFORGE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "rocm"
    db = root / "share" / "miopen" / "db"
    db.mkdir(parents=True)
    (db / "gfx90a68.kdb").write_bytes(b"x")
    env: dict[str, str] = {}
    first = probe_library_code(root, known=KNOWN, environ=env)
    again = probe_library_code(root, known=KNOWN, environ=env)
    assert first[0].cached_at == "" and again[0].cached_at != ""
    (db / "gfx942130.kdb").write_bytes(b"x")  # a new entry: the folder changed
    fresh = probe_library_code(root, known=KNOWN, environ=env)
    assert fresh[0].cached_at == "" and fresh[0].targets == ("gfx90a", "gfx942")
