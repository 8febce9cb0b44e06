"""Raw AMDGPU code objects embedded in a host library's data sections (issue 15 item 6).

Code objects are compiled at test time by clang-22 (`--target=amdgcn-amd-amdhsa -mcpu=...`,
linked by lld into the ELF that `hipModuleLoadData` takes) and embedded by gcc with `.incbin`
into `.rodata` and `.data.rel.ro` of a host .so, as libraries that load their kernels at run
time do. The reader must report their targets and `--expect` must count them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rocmforge.inspect import inspect_paths

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.needs_tool("clang-22", "ld.lld-22", "gcc")

KERNEL = """
__attribute__((amdgpu_kernel)) void scale(float* x, float f) {
  x[__builtin_amdgcn_workitem_id_x()] *= f;
}
"""
HOST = """
__asm__(".section .rodata\\n.balign 64\\n.globl kernels_a\\nkernels_a:\\n.incbin \\"{a}\\"\\n"
        ".section .data.rel.ro\\n.balign 16\\n.globl kernels_b\\nkernels_b:\\n"
        ".incbin \\"{b}\\"\\n.text\\n");
int host_function(void) {{ return 42; }}
"""


def code_object(folder: Path, mcpu: str) -> Path:
    src = folder / "kernel.c"
    src.write_text(KERNEL)
    out = folder / f"kernel-{mcpu.replace(':', '_')}.hsaco"
    subprocess.run(["clang-22", "--target=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-nogpulib", "-O2",
                    str(src), "-o", str(out)], check=True)  # fmt: skip
    return out


def host_with(folder: Path, first: Path, second: Path, name: str = "libembed.so") -> Path:
    src = folder / "host.c"
    src.write_text(HOST.format(a=first, b=second))
    lib = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def invoke_inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO), HIP_PLATFORM="amd")
    return subprocess.run([sys.executable, "-m", "invoke", "inspect", *args], cwd=REPO,
                          capture_output=True, text=True, env=env)  # fmt: skip


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("raw")
    return host_with(folder, code_object(folder, "gfx90a:xnack+"), code_object(folder, "gfx942"))


def test_raw_code_objects_are_found_with_their_targets(embedded: Path) -> None:
    (lib,) = inspect_paths([embedded]).libraries
    assert lib.status == "ok"
    assert lib.targets == ("gfx90a:xnack+", "gfx942")
    assert [(r.section, r.entry_id.target if r.entry_id else "") for r in lib.raw_code_objects] == [
        (".rodata", "gfx90a:xnack+"), (".data.rel.ro", "gfx942")]  # fmt: skip
    assert lib.containers == ("raw",)
    assert lib.code_object_versions == (6,)  # clang-22's default code object version
    hsaco = {r.section: r for r in lib.raw_code_objects}[".rodata"]
    assert hsaco.size == (embedded.parent / "kernel-gfx90a_xnack+.hsaco").stat().st_size


def test_expect_counts_raw_code_objects(embedded: Path) -> None:
    done = invoke_inspect(str(embedded), "--expect", "gfx90a:xnack+;gfx942")
    assert done.returncode == 0, done.stderr
    assert "2 raw code object(s) in .data.rel.ro, .rodata (loaded with hipModuleLoadData" in (
        done.stdout
    )
    missing = invoke_inspect(str(embedded), "--expect", "gfx1100")
    assert missing.returncode == 1
    assert "expected gfx1100 not found in 1 of 1 libraries with device code" in missing.stderr
    # xnack+ code does not load on an xnack- device.
    assert invoke_inspect(str(embedded), "--expect", "gfx90a:xnack-").returncode == 1


def test_raw_code_objects_in_a_deflated_wheel_member(embedded: Path, tmp_path: Path) -> None:
    wheel = tmp_path / "kernels-0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(embedded, "kernels/libembed.so")
    done = invoke_inspect(str(wheel), "--json")
    assert done.returncode == 0, done.stderr
    (lib,) = json.loads(done.stdout)["libraries"]
    assert [(r["section"], r["target"]) for r in lib["raw_code_objects"]] == [
        (".rodata", "gfx90a:xnack+"), (".data.rel.ro", "gfx942")]  # fmt: skip


def test_a_cut_raw_code_object_is_damage(tmp_path: Path) -> None:
    whole = code_object(tmp_path, "gfx942")
    cut = tmp_path / "cut.hsaco"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    lib_path = host_with(tmp_path, code_object(tmp_path, "gfx90a"), cut, "libcut.so")
    (lib,) = inspect_paths([lib_path]).libraries
    assert lib.status == "partial"
    assert lib.targets == ("gfx90a",)
    assert lib.error.startswith("raw code object at .data.rel.ro+0x")
    assert "past the end of .data.rel.ro" in lib.error
    assert invoke_inspect(str(lib_path), "--expect", "gfx90a").returncode == 1
