"""Doctor: pure diagnose() on constructed Facts, and the real `invoke doctor` on this machine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.targets import requested_targets
from rocmforge.plan.doctor import diagnose
from rocmforge.plan.doctor_row import DoctorRow, exit_status
from rocmforge.probes.compile_probe import TargetProbe
from rocmforge.probes.facts import Facts
from rocmforge.probes.gpus import GpuAgent, GpuScan
from rocmforge.probes.rocm import RocmInstall
from rocmforge.probes.system import DeviceAccess, PythonEnv, SystemFacts, ToolVersion, TritonDist
from rocmforge.settings import Settings

REPO = Path(__file__).resolve().parents[2]
ROCM = RocmInstall(
    root=Path("/opt/rocm-7.0.2"),
    version="7.0.2",
    source="/opt/rocm*",
    version_source=".info/version",
    hipcc=Path("/opt/rocm-7.0.2/bin/hipcc"),
    llvm_major=20,
    device_lib_dir=Path("/opt/rocm-7.0.2/lib/llvm/amdgcn/bitcode"),
    hipcc_on_path=True,
)


def system(**changes) -> SystemFacts:  # noqa: ANN003
    base = dict(
        cores=32,
        mem_total_gib=64.0,
        mem_available_gib=60.0,
        work_dir=Path(".rocmforge"),
        disk_checked_at=Path("/work"),
        disk_free_gib=200.0,
        cmake=ToolVersion(path=Path("/usr/bin/cmake"), version="3.31.0"),
        ninja=ToolVersion(path=Path("/usr/bin/ninja"), version="1.11.1"),
        python=PythonEnv(
            executable="/v/bin/python", version="3.11.7", in_venv=True, in_conda=False
        ),
        triton=(),
        devices=DeviceAccess(
            kfd_present=True,
            kfd_rw=True,
            render_group_exists=True,
            in_render_group=True,
            is_root=False,
        ),
        os_release={},
    )
    base.update(changes)
    return SystemFacts(**base)


def facts(**changes) -> Facts:  # noqa: ANN003
    base = dict(
        rocm_installs=(ROCM,),
        rocm=ROCM,
        rocm_problem="",
        path_warnings=(),
        hipcc_owner=ROCM,
        gpus=GpuScan(agents=(), source="", tried=("kfd sysfs: absent",), overrides=()),
        system=system(),
        environ_flags={},
    )
    base.update(changes)
    return Facts(**base)


def row(rows: tuple[DoctorRow, ...], check: str) -> DoctorRow:
    return next(r for r in rows if r.check == check)


def probe(target: str, ok: bool, reason: str, lib: bool | None = True) -> TargetProbe:
    return TargetProbe(
        target=target,
        compiles=ok,
        compile_reason=reason,
        device_lib=lib,
        device_lib_reason="x",
        argv=(),
    )


def test_every_fail_has_a_fix() -> None:
    f = facts(
        rocm=None,
        rocm_installs=(),
        hipcc_owner=None,
        rocm_problem="No ROCm install was found.",
        system=system(
            disk_free_gib=2.0, mem_total_gib=2.0, cmake=ToolVersion(path=None, version="")
        ),
    )
    rows = diagnose(f, (), Settings())
    fails = [r for r in rows if r.status == "FAIL"]
    assert {r.check for r in fails} >= {"ROCm install", "targets", "cmake", "disk", "memory"}
    assert all(r.fix for r in fails)
    assert row(rows, "targets").fix.startswith("invoke doctor --arch gfx1100")
    assert exit_status(rows) == 1


def test_target_rows_from_probe() -> None:
    table = load_arch_table()
    f = facts(
        target_probes=(
            probe("gfx90a", True, "hipcc compiled a kernel for gfx90a"),
            probe("gfx942", False, "this toolchain (LLVM 15) does not know gfx942", lib=False),
        )
    )
    rows = diagnose(f, ("gfx90a", "gfx942"), Settings(arch="gfx90a;gfx942"), table=table)
    assert row(rows, "compile gfx90a").status == "OK"
    bad = row(rows, "compile gfx942")
    assert (bad.status, bad.detail) == ("FAIL", "this toolchain (LLVM 15) does not know gfx942")
    # The ROCm the PyTorch row would name (the newest one its release ships wheels for), with
    # the target's own floor beside it (issue 32 item 5: one advice, not two).
    assert bad.fix.startswith("install ROCm ") and "gfx942 needs ROCm >= " in bad.fix
    assert "invoke doctor --arch gfx942 --rocm-path /opt/rocm-<version>" in bad.fix
    assert row(rows, "device lib gfx942").status == "FAIL"


def test_a_compile_verdict_from_the_probe_store_says_so() -> None:
    import dataclasses

    kept = dataclasses.replace(probe("gfx90a", True, "hipcc compiled a kernel for gfx90a"),
                               cached_at="2026-12-03T13:44:08Z")
    fresh = probe("gfx942", False, "this toolchain (LLVM 15) does not know gfx942", lib=False)
    rows = diagnose(facts(target_probes=(kept, fresh)), ("gfx90a", "gfx942"),
                    Settings(arch="gfx90a;gfx942"), table=load_arch_table())
    assert row(rows, "compile gfx90a") == DoctorRow(
        check="compile gfx90a", status="OK",
        detail="hipcc compiled a kernel for gfx90a (result cached 2026-12-03T13:44:08Z; "
               "nothing it depends on changed since; --no-cache compiles afresh)")
    assert row(rows, "compile gfx942").detail == "this toolchain (LLVM 15) does not know gfx942"


def test_gpu_found_but_not_targeted_and_override_warn() -> None:
    gpus = GpuScan(
        agents=(GpuAgent(target="gfx1100", source="kfd sysfs", node=1),),
        source="kfd sysfs",
        tried=(),
        overrides=(("HSA_OVERRIDE_GFX_VERSION", "11.0.0"),),
    )
    rows = diagnose(facts(gpus=gpus), ("gfx942",), Settings(arch="gfx942"))
    mismatch = row(rows, "targets vs GPUs")
    assert mismatch.status == "WARN"
    assert "this machine has gfx1100" in mismatch.detail
    override = row(rows, "HSA_OVERRIDE_GFX_VERSION")
    assert (override.status, override.fix) == ("WARN", "unset HSA_OVERRIDE_GFX_VERSION")


def test_targets_default_to_gpus_found() -> None:
    table = load_arch_table()
    assert [str(t) for t in requested_targets("", ("gfx942", "gfx1100"), table)] == [
        "gfx942",
        "gfx1100",
    ]
    assert requested_targets("", (), table) == ()
    # Not filtered by a toolchain: the doctor reports gfx942 on LLVM 15 as a row, not an error.
    assert [str(t) for t in requested_targets("mi300", (), table)] == ["gfx942"]


def test_triton_shadow_python_env_and_memory() -> None:
    f = facts(
        system=system(
            triton=(TritonDist(name="triton", version="3.1.0", location="/usr/lib/python3/x"),),
            python=PythonEnv(
                executable="/usr/bin/python3", version="3.11.2", in_venv=False, in_conda=False
            ),
            cores=64,
            mem_total_gib=32.0,
        )
    )
    rows = diagnose(f, (), Settings(max_jobs=32))
    assert row(rows, "triton").fix == "python3 -m pip uninstall -y triton"
    assert row(rows, "python env").status == "WARN"
    memory = row(rows, "memory")
    assert memory.status == "WARN"
    assert memory.fix == "export ROCMFORGE_MAX_JOBS=7"


def test_path_disagreement_and_foreign_hipcc_warn() -> None:
    other = RocmInstall(
        root=Path("/usr"),
        version="5.2",
        source="distro /usr",
        hipcc=Path("/usr/bin/hipcc"),
        hipcc_on_path=True,
    )
    f = facts(path_warnings=("HIP_PATH=/usr belongs to a different install",), hipcc_owner=other)
    rows = diagnose(f, (), Settings())
    assert row(rows, "ROCM_PATH/HIP_PATH").fix == (
        "export ROCM_PATH=/opt/rocm-7.0.2 HIP_PATH=/opt/rocm-7.0.2"
    )
    assert row(rows, "hipcc on PATH").fix == 'export PATH=/opt/rocm-7.0.2/bin:"$PATH"'


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["python3", "-m", "invoke", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_COLOR": "1"},
    )


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_real_doctor_gfx90a_is_truthful() -> None:
    done = invoke("doctor", "--arch", "gfx90a", "--json")
    doc = json.loads(done.stdout)
    assert doc["schema"] == "rocmforge.doctor/1"
    rows = {r["check"]: r for r in doc["rows"]}
    assert rows["compile gfx90a"]["status"] == "OK"
    assert rows["device lib gfx90a"]["status"] == "OK"
    assert rows["ROCm install"]["detail"].startswith("ROCm 5.2 at /usr")
    failed = [r for r in doc["rows"] if r["status"] == "FAIL"]
    assert done.returncode == (1 if failed else 0)
    assert doc["ok"] is (not failed)


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_real_doctor_gfx942_names_the_toolchain() -> None:
    done = invoke("doctor", "--arch", "gfx942")
    assert done.returncode == 1
    line = next(x for x in done.stdout.splitlines() if x.startswith("compile gfx942"))
    assert "FAIL" in line
    assert "this toolchain (LLVM 15) does not know gfx942" in line
    assert "install ROCm 6.4 (the newest PyTorch 2.9.1 ships wheels for; gfx942 needs ROCm >= " \
        in line and "--rocm-path" in line
    assert "Traceback" not in done.stderr


def test_doctor_bad_rocm_path_exits_2(tmp_path: Path) -> None:
    done = invoke("doctor", "--arch", "gfx90a", "--rocm-path", str(tmp_path / "nope"))
    assert done.returncode == 2
    assert f"The ROCm path {tmp_path / 'nope'} given by --rocm-path does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    done = invoke("doctor", "--arch", "gfx90a", "--rocm-path", str(tmp_path))
    assert done.returncode == 2
    assert "is not a ROCm install" in done.stderr


def test_doctor_bad_target_exits_2() -> None:
    done = invoke("doctor", "--arch", "sm_90")
    assert done.returncode == 2
    assert "sm_90" in done.stderr
    assert "Traceback" not in done.stderr


def test_python_outside_the_release_range_fails() -> None:
    old = PythonEnv(executable="/usr/bin/python3.9", version="3.9.18", in_venv=True, in_conda=False)
    rows = diagnose(facts(system=system(python=old)), (), Settings(pytorch_ref="v2.9.1"))
    python = row(rows, "python")
    assert python.status == "FAIL"
    assert ">=3.10" in python.detail
    assert python.fix.startswith("export ROCMFORGE_PYTHON=")


def test_doctor_json_document_is_exact() -> None:
    from types import SimpleNamespace

    from rocmforge.plan.doctor_row import doctor_json

    kept = TargetProbe(target="gfx1100", compiles=False,
                       compile_reason="this toolchain (LLVM 19) does not know gfx1100",
                       device_lib=False, device_lib_reason="", argv=(),
                       cached_at="2026-12-03T13:44:08Z")
    facts = SimpleNamespace(rocm=SimpleNamespace(root=Path("/opt/rocm-6.4.1"), version="6.4.1",
                                                 llvm_major=19), target_probes=(kept,))
    rows = [DoctorRow(check="rocm", status="OK", detail="6.4.1"),
            DoctorRow(check="disk", status="FAIL", detail="2 GiB", fix="free space")]
    doc = doctor_json(facts, ["gfx1100"], rows)
    from rocmforge import __version__

    assert doc == {"schema": "rocmforge.doctor/1", "rocmforge_version": __version__,
                   "ok": False, "targets": ["gfx1100"],
                   "rocm": {"root": "/opt/rocm-6.4.1", "version": "6.4.1", "llvm_major": 19},
                   "rows": [r.to_json() for r in rows],
                   "compile_probes": [{"target": "gfx1100", "compiles": False,
                                       "reason": "this toolchain (LLVM 19) does not know gfx1100",
                                       "cached_at": "2026-12-03T13:44:08Z"}]}
    bare = SimpleNamespace(rocm=None, target_probes=())
    assert doctor_json(bare, [], rows[:1])["ok"] is True
    assert doctor_json(bare, [], rows[:1])["rocm"] is None
    assert doctor_json(bare, [], rows[:1])["compile_probes"] == []


@pytest.mark.needs_tool("gcc-12", "hipcc")
def test_one_host_compiler_verdict_in_doctor_toolchain_and_build(tmp_path) -> None:
    """Issue 15 item 11: GCC 12 with Debian's ROCm 5.2 is the same FAIL, with the same reason,
    in doctor without --arch, doctor with --arch, `invoke toolchain` and the build's preflight;
    allow_compiler makes it the same WARN everywhere."""
    import json as jsonlib
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def run(*args: str, allow: bool = False) -> dict:
        env = {**os.environ, "ROCMFORGE_GCC": "12", "ROCMFORGE_WORK_DIR": str(tmp_path / "w")}
        if allow:
            env["ROCMFORGE_ALLOW_COMPILER"] = "true"
        done = subprocess.run([sys.executable, "-m", "invoke", *args, "--json"], cwd=root,
                              env=env, capture_output=True, text=True, timeout=180)
        return jsonlib.loads(done.stdout)

    def verdicts(allow: bool) -> list[tuple[str, str]]:
        found = []
        for args in (("doctor",), ("doctor", "--arch", "gfx90a")):
            row = next(r for r in run(*args, allow=allow)["rows"]
                       if r["check"] == "host compiler")
            found.append((row["status"], row["detail"].split(": ", 1)[1]))
        gcc12 = next(c for c in run("toolchain", allow=allow)["compilers"]
                     if c["kind"] == "gcc" and c["major"] == 12)
        found.append((gcc12["status"], gcc12["reason"]))
        return found

    refused = verdicts(False)
    assert {status for status, _ in refused} == {"FAIL"}
    assert len({reason for _, reason in refused}) == 1
    assert "the build refuses a compiler the table warns about" in refused[0][1]
    plan = run("plan", "--arch", "gfx90a")
    assert "host compiler" in plan["steps"][0]["inputs"]["fail_rows"]
    allowed = verdicts(True)
    assert {status for status, _ in allowed} == {"WARN"}
    assert len({reason for _, reason in allowed}) == 1
    assert allowed[0][1].endswith("(allowed by --allow-compiler)")
    assert "host compiler" not in run("plan", "--arch", "gfx90a",
                                      allow=True)["steps"][0]["inputs"]["fail_rows"]


@pytest.mark.parametrize("task", ["doctor", "build"])
def test_a_work_dir_that_is_a_file_is_refused_in_one_paragraph(tmp_path: Path,
                                                                 task: str) -> None:
    """Doctor said "disk OK … at …/README.md" for --work-dir README.md while build failed on
    its lock ("Not a directory"): both refuse it the same way, exit 2, nothing written."""
    import os
    import sys

    blocker = tmp_path / "notes.md"
    blocker.write_text("a file\n")
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "-r", str(REPO), task, "--arch", "gfx1100",
         "--work-dir", str(blocker)], cwd=tmp_path, capture_output=True, text=True,
        timeout=300, env={**os.environ, "HIP_PLATFORM": "amd", "PYTHONPATH": str(REPO),
                          "NO_COLOR": "1"})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"rocmforge: The work dir {blocker} is a file, not a folder. The kit keeps the sources, "
        "the venv, logs and dist/ in the work dir (--work-dir / setting work_dir), so it must be "
        "a folder or not exist yet. Fix: pass --work-dir a folder (or a path that does not "
        "exist yet), e.g. --work-dir .rocmforge.\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]
    assert blocker.read_text() == "a file\n"
