"""Preflight round p1: replay each reproducible condition of tests/failures/preflight/
CONDITIONS.md on this machine and run the real `invoke doctor --json` against it.

Each case builds its condition with real parts (a PyTorch-like git tree from
tests/treefixtures.py with the files the condition needs, CMake 4 from /opt/rf-cmake4, a real
tmpfs as TMPDIR, a venv with setuptools 82.0.0 from the package index, the venv of PyPI's triton
in /opt/rf-triton-3.6.0, a copy of Debian's libamdhip64 on LD_LIBRARY_PATH, a GCC install
without C++ headers for hipcc, a file: SDK index, sccache against a closed port), runs doctor
once with it and once without it (the control), and grades the rows that name the condition:

  STOP     a watched row FAILs (doctor exits 1, `invoke build` refuses before any step)
  AVOIDED  the kit's build does the right thing by itself (the case says what shows it)
  WARN     a watched row WARNs, the build would still fail
  MISSED   nothing: the condition passes unnoticed

The conditions that cannot be made here (an AMD GPU, GCC 15, a second /opt/rocm-*, the
network) are listed in BY_READING with the code that decides them: never counted as reproduced.

  python3 benchmarks/preflight_round.py            # the table (markdown), about 2 minutes
  python3 benchmarks/preflight_round.py --json     # the same as JSON
  python3 benchmarks/preflight_round.py c07 c31    # some cases only

Needs: root (mount -t tmpfs), Debian's hipcc and ROCm 5.2 packages, /opt/rf-cmake4,
/opt/rf-triton-3.6.0, sccache on PATH, the package index for setuptools 82.0.0 (case c10).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gitfixtures import commit_files, git  # noqa: E402
from treefixtures import build_era_repo  # noqa: E402

CMAKE4 = Path("/opt/rf-cmake4/bin")
TRITON_VENV = Path("/opt/rf-triton-3.6.0")
DEBIAN_HIP = Path("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5")
FEDORA_CXXFLAGS = ("-O2 -flto=auto -ffat-lto-objects -fexceptions -g -grecord-gcc-switches "
                   "-pipe -Wall -Werror=format-security -Wp,-U_FORTIFY_SOURCE,"
                   "-D_FORTIFY_SOURCE=3 -Wp,-D_GLIBCXX_ASSERTIONS -fstack-protector-strong "
                   "-m64 -mtune=generic")

# The group and buffer-resource lines of Composable Kernel's include/ck/ck.hpp, in its shape
# (target lists as read in ROCm/composable_kernel@03874cbd:include/ck/ck.hpp): gfx1012 is in
# the __gfx101__ group, which no buffer-resource branch names; gfx90c is in no group at all.
CK_HPP = """\
#pragma once
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
#define __gfx94__
#endif
#if defined(__gfx1010__) || defined(__gfx1011__) || defined(__gfx1012__)
#define __gfx101__
#endif
#if defined(__gfx1030__) || defined(__gfx1031__) || defined(__gfx1032__) || \\
    defined(__gfx1034__) || defined(__gfx1035__) || defined(__gfx1036__)
#define __gfx103__
#endif
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
#define __gfx11__
#endif
#if defined(__gfx1200__) || defined(__gfx1201__)
#define __gfx12__
#endif
#ifndef __HIP_DEVICE_COMPILE__
#define CK_BUFFER_RESOURCE_3RD_DWORD -1
#elif defined(__gfx803__) || defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || \\
    defined(__gfx90a__) || defined(__gfx94__)
#define CK_BUFFER_RESOURCE_3RD_DWORD 0x00020000
#elif defined(__gfx103__)
#define CK_BUFFER_RESOURCE_3RD_DWORD 0x31014000
#elif defined(__gfx11__) || defined(__gfx12__)
#define CK_BUFFER_RESOURCE_3RD_DWORD 0x31004000
#endif
"""

# Composable Kernel's top CMakeLists.txt: a header and the target lists in their shape (the
# fixture names its upstream source).
CK_CMAKELISTS = ("cmake_minimum_required(VERSION 3.14)\n"
                 "project(composable_kernel VERSION 1.2.0 LANGUAGES CXX HIP)\n"
                 + (Path(__file__).resolve().parents[1] / "tests" / "fixtures"
                    / "composable_kernel" / "targets.cmake").read_text())


@dataclass
class Scenario:
    """One doctor run: the work dir, the targets, environment changes and extra flags."""

    work: Path
    arch: str = "gfx90a"
    env: dict[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()


@dataclass
class Ctx:
    root: Path
    repo: object
    mounts: list[Path] = field(default_factory=list)
    refs: dict[Path, str] = field(default_factory=dict)
    n: int = 0

    def tree(self, files: dict[str, str] | None = None, ref: str = "v2.9.1") -> Path:
        """A work dir holding the kit's own checkout (`invoke checkout`, so the lock names it
        and plan/doctor read the tree's facts) of a branch of the fixture repository: `ref`
        plus `files` committed."""
        self.n += 1
        work = self.root / f"w{self.n}"
        branch = f"case{self.n}"
        git("checkout", "-q", "-b", branch, ref, cwd=self.repo.path)
        if files:
            commit_files(self.repo.path, dict(files), f"condition {branch}")
        git("checkout", "-q", "main", cwd=self.repo.path)
        self.refs[work] = branch
        env = {**os.environ, "PYTHONPATH": str(REPO), **self.tree_env(work)}
        done = subprocess.run(["invoke", "checkout"], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"invoke checkout {branch}: {done.stderr[-800:]}")
        return work

    def tree_env(self, work: Path) -> dict[str, str]:
        return {"ROCMFORGE_PYTORCH_REPO": str(self.repo.path),
                "ROCMFORGE_PYTORCH_REF": self.refs[work], "ROCMFORGE_WORK_DIR": str(work)}

    def tmpfs(self, size: str) -> Path:
        where = self.root / f"tmpfs-{size}"
        where.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                       check=True)
        self.mounts.append(where)
        return where


Rows = list[dict[str, str]]


@dataclass
class Case:
    id: str
    thread: str
    klass: str
    made: str  # how the condition is made here
    setup: Callable[[Ctx], tuple[Scenario, Scenario | None]]
    watch: Callable[[dict[str, str]], bool]  # the rows that can name the condition
    # non-empty: how the build avoids it (the rows, the scenario's environment changes)
    avoided: Callable[[Rows, dict[str, str]], str] = lambda rows, env: ""
    counted: bool = True  # False: a variant shown beside the thread's own case, not counted


def run_doctor(ctx: Ctx, s: Scenario) -> tuple[int, Rows]:
    env = {k: v for k, v in os.environ.items() if k not in s.unset}
    env.update({"PYTHONPATH": str(REPO), "HIP_PLATFORM": "amd", **ctx.tree_env(s.work)})
    env.update(s.env)
    done = subprocess.run(["invoke", "doctor", "--arch", s.arch, "--work-dir", str(s.work),
                           "--json", *s.flags], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900)
    try:
        rows = json.loads(done.stdout)["rows"]
    except (ValueError, KeyError):
        raise SystemExit(f"doctor gave no JSON ({done.returncode}): {done.stderr[-600:]}"
                         ) from None
    return done.returncode, rows


def grade(case: Case, rows: Rows, env: dict[str, str]) -> tuple[str, list[dict[str, str]], str]:
    seen = [r for r in rows if case.watch(r)]
    if any(r["status"] == "FAIL" for r in seen):
        return "STOP", seen, ""
    how = case.avoided(rows, env)
    if how:
        return "AVOIDED", seen, how
    if any(r["status"] == "WARN" for r in seen):
        return "WARN", seen, ""
    return "MISSED", seen, ""


def check(name: str, needle: str = "") -> Callable[[dict[str, str]], bool]:
    def match(row: dict[str, str]) -> bool:
        return row["check"].startswith(name) and needle.lower() in (
            row["detail"] + " " + row.get("fix", "")).lower()
    return match


# --- the conditions ---------------------------------------------------------------------------

LOW_FLOOR = "cmake_minimum_required(VERSION 3.1.3)\nproject(oldlib C)\n"


def c01(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree({"third_party/protobuf/cmake/CMakeLists.txt": LOW_FLOOR})
    path = f"{CMAKE4}:{os.environ['PATH']}"
    return (Scenario(work, env={"PATH": path}),
            Scenario(work, env={"PATH": path, "ROCMFORGE_CMAKE_POLICY_MINIMUM": ""}))


def c02(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()  # the low floor is in a project configure downloads, not in the tree
    path = f"{CMAKE4}:{os.environ['PATH']}"
    return (Scenario(work, env={"PATH": path}),
            Scenario(work, env={"PATH": path, "ROCMFORGE_CMAKE_POLICY_MINIMUM": ""}))


def policy_set_by_build(rows: Rows, scenario_env: dict[str, str]) -> str:
    """The build environment carries CMAKE_POLICY_VERSION_MINIMUM to every CMake it runs;
    proven with CMake 4 configuring a project that declares 3.1.3, as the variable reaches it."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import parse_targets
    from rocmforge.plan.environment import build_environment
    from rocmforge.probes.facts import gather_facts
    from rocmforge.settings import Settings, defaults_from_config, resolve

    settings = resolve(defaults=defaults_from_config(), environ={**os.environ, **scenario_env})
    env = build_environment(settings, gather_facts(Settings()),
                            parse_targets("gfx90a", load_arch_table())).as_dict()
    value = env.get("CMAKE_POLICY_VERSION_MINIMUM", "")
    if not value:
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "dep"
        src.mkdir()
        (src / "CMakeLists.txt").write_text(LOW_FLOOR)
        base = {k: v for k, v in os.environ.items() if k != "CMAKE_POLICY_VERSION_MINIMUM"}
        cmake = str(CMAKE4 / "cmake")
        bare = subprocess.run([cmake, "-S", str(src), "-B", f"{tmp}/b1"], env=base,
                              capture_output=True, text=True, timeout=300)
        kit = subprocess.run([cmake, "-S", str(src), "-B", f"{tmp}/b2"],
                             env={**base, "CMAKE_POLICY_VERSION_MINIMUM": value},
                             capture_output=True, text=True, timeout=300)
    if bare.returncode != 0 and kit.returncode == 0:
        return (f"the build environment sets CMAKE_POLICY_VERSION_MINIMUM={value}; CMake 4 "
                "refuses the 3.1.3 project without it and configures it with it")
    return ""


def c03(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    floor = "cmake_minimum_required(VERSION 3.27 FATAL_ERROR)\nproject(Torch CXX C)\n"
    work = ctx.tree({"CMakeLists.txt": floor})
    return Scenario(work), Scenario(ctx.tree())


def c03h(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """As c03, the tree cloned into src/pytorch by hand (no `invoke checkout`, no lock)."""
    floor = "cmake_minimum_required(VERSION 3.27 FATAL_ERROR)\nproject(Torch CXX C)\n"
    ctx.n += 1
    branch = f"case{ctx.n}"
    git("checkout", "-q", "-b", branch, "v2.9.1", cwd=ctx.repo.path)
    commit_files(ctx.repo.path, {"CMakeLists.txt": floor}, f"condition {branch}")
    git("checkout", "-q", "main", cwd=ctx.repo.path)
    work = ctx.root / f"w{ctx.n}"
    (work / "src").mkdir(parents=True)
    git("clone", "-q", "--branch", branch, str(ctx.repo.path), str(work / "src" / "pytorch"),
        cwd=ctx.root)
    ctx.refs[work] = branch
    # Built as the release the tree is (the kit's table row for v2.9.1: floor 3.20), not as
    # the branch name, which no row names (the newest row's floor would be the estimate).
    return Scenario(work, env={"ROCMFORGE_PYTORCH_REF": "v2.9.1"}), None


def fake_gcc_without_headers(ctx: Ctx, version: str) -> Path:
    """A GCC installation clang accepts (crtbegin.o under lib/gcc/<triple>/<version>) that has
    no C++ headers: what a gcc-N without libstdc++-N-dev looks like to clang."""
    top = ctx.root / f"gcc-{version}-noheaders"
    lib = top / "lib" / "gcc" / "x86_64-linux-gnu" / version
    lib.mkdir(parents=True)
    real = Path("/usr/lib/gcc/x86_64-linux-gnu/12")
    for name in ("crtbegin.o", "crtbeginS.o", "crtend.o", "crtendS.o", "libgcc.a",
                 "libgcc_s.so", "libstdc++.so"):
        if (real / name).exists():
            shutil.copy2(real / name, lib / name)
    return top


def c04(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    gcc = fake_gcc_without_headers(ctx, "13")
    work = ctx.tree()
    flag = f"--gcc-toolchain={gcc}"
    return (Scenario(work, env={"HIPCC_COMPILE_FLAGS_APPEND": flag}, flags=("--no-cache",)),
            Scenario(work, flags=("--no-cache",)))


def c05(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    gcc = fake_gcc_without_headers(ctx, "12")
    work = ctx.tree()
    flag = f"--gcc-toolchain={gcc}"
    return (Scenario(work, arch="gfx1030", env={"HIPCC_COMPILE_FLAGS_APPEND": flag},
                     flags=("--no-cache",)),
            Scenario(work, arch="gfx1030", flags=("--no-cache",)))


def c07(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()
    return (Scenario(work, env={"CXXFLAGS": FEDORA_CXXFLAGS}, flags=("--no-cache",)),
            Scenario(work, flags=("--no-cache",)))


def c08(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()
    return (Scenario(work, env={"CXXFLAGS": "-O2 -D_GLIBCXX_ASSERTIONS"}, flags=("--no-cache",)),
            Scenario(work, flags=("--no-cache",)))


def setuptools_venv(ctx: Ctx, where: Path, version: str) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    done = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q",
                           f"setuptools=={version}"], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"setuptools {version} from the index: {done.stderr[-400:]}")


PKG_SETUP = "import os\nimport pkg_resources\nfrom setuptools import setup\n"


def c10(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """As TheRock#3311 met it: no build venv yet (the build installs the newest setuptools);
    the thread does not name the importing file, here the tree's setup.py."""
    return (Scenario(ctx.tree({"setup.py": PKG_SETUP})), Scenario(ctx.tree()))


def c10v(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """The build venv already holds setuptools 82.0.0 (from the index)."""
    work = ctx.tree({"setup.py": PKG_SETUP})
    setuptools_venv(ctx, work / "venv", "82.0.0")
    control = ctx.tree({"setup.py": PKG_SETUP})
    setuptools_venv(ctx, control / "venv", "80.9.0")
    return Scenario(work), Scenario(control)


def c10d(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """setuptools 82.0.0 in the build venv; the import is in a module setup.py imports (as
    pytorch's setup.py imports tools.setup_helpers.env)."""
    work = ctx.tree({"tools/setup_helpers/env.py": PKG_SETUP,
                     "setup.py": "from tools.setup_helpers.env import build_type\n"
                                 "from setuptools import setup\n"})
    setuptools_venv(ctx, work / "venv", "82.0.0")
    return Scenario(work), None


def c12(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()
    (work / "venv").symlink_to(TRITON_VENV)
    return Scenario(work), Scenario(ctx.tree())


def aotriton(arch: str) -> Callable[[Ctx], tuple[Scenario, Scenario | None]]:
    def setup(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
        work = ctx.tree()
        return Scenario(work, arch=arch), Scenario(work, arch="gfx90a")
    return setup


def avoided_when(name: str, needle: str, how: str,
                 label: str = "row") -> Callable[[Rows, dict[str, str]], str]:
    """The build avoids the condition when doctor's row `name` says `needle`: `how`, with it."""
    def avoided(rows: Rows, _env: dict[str, str]) -> str:
        for r in rows:
            if r["check"] == name and needle in r["detail"]:
                return f"{how} ({label}: {r['detail'][:90]}...)"
        return ""
    return avoided


left_out = avoided_when(
    "feature flash_attention", "left out of this build",
    "the plan leaves flash and memory-efficient attention (AOTriton) out of the build for this "
    "target", label="row WARNs")
pinned_setuptools = avoided_when(
    "setuptools", "installs 'setuptools<82'",
    "the build-requirements step pins setuptools below 82 for this checkout")


def ck(arch: str) -> Callable[[Ctx], tuple[Scenario, Scenario | None]]:
    def setup(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
        work = ctx.tree({"third_party/composable_kernel/include/ck/ck.hpp": CK_HPP,
                         "third_party/composable_kernel/CMakeLists.txt": CK_CMAKELISTS})
        return Scenario(work, arch=arch), Scenario(work, arch="gfx90a")
    return setup


def c21(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    return Scenario(ctx.tree()), None  # Debian's ROCm 5.2 has no hipblaslt: the machine's own


def c25(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    other = ctx.root / "rocm-5.7-leftover" / "lib"
    other.mkdir(parents=True)
    shutil.copy2(DEBIAN_HIP.resolve(), other / "libamdhip64.so.5")
    work = ctx.tree()
    return Scenario(work, env={"LD_LIBRARY_PATH": str(other)}), Scenario(work)


def c27(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """ROCM_PATH names another ROCm (here a second copy of the install, /usr's hipcc and
    version files under another root) while PATH's hipcc is /usr's."""
    other = ctx.root / "rocm-6.2.0"
    (other / "bin").mkdir(parents=True)
    (other / ".info").mkdir()
    (other / ".info" / "version").write_text("6.2.0-115\n")
    (other / "include" / "hip").mkdir(parents=True)
    shutil.copy2("/usr/include/hip/hip_version.h", other / "include" / "hip" / "hip_version.h")
    work = ctx.tree()
    return (Scenario(work, env={"ROCM_PATH": str(other), "HIP_PATH": str(other)}),
            Scenario(work, unset=("ROCM_PATH", "HIP_PATH")))


def c28(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """Fedora's hip-config-version.cmake (version 6.0.0, same major version only): the tree's
    find_package(HIP 1.0) refuses it although the config exists. lib/cmake (not Fedora's
    lib64/cmake: Debian's CMake does not search lib64). Checked here with the real cmake:
    find_package(hip 1.0 CONFIG) fails on this prefix, find_package(hip CONFIG) passes."""
    prefix = ctx.root / "fedora-hip"
    cfg = prefix / "lib" / "cmake" / "hip"
    cfg.mkdir(parents=True)
    (cfg / "hip-config.cmake").write_text('set(HIP_VERSION "6.0.0")\n')
    (cfg / "hip-config-version.cmake").write_text(
        'set(PACKAGE_VERSION "6.0.0")\nif(PACKAGE_FIND_VERSION_MAJOR STREQUAL "6")\n'
        "  set(PACKAGE_VERSION_COMPATIBLE TRUE)\nelse()\n"
        "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\nendif()\n")
    for version, ok in (("1.0", False), ("", True)):
        src = ctx.root / f"hip-probe{version or 'any'}"
        src.mkdir()
        (src / "CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\n"
            f'find_package(hip {version} CONFIG REQUIRED PATHS "{prefix}" NO_DEFAULT_PATH)\n')
        done = subprocess.run(["cmake", "-S", str(src), "-B", str(src / "b")],
                              capture_output=True, text=True, timeout=300)
        if (done.returncode == 0) != ok:
            raise SystemExit(f"c28: find_package(hip {version}) did not behave: {done.stderr}")
    # The tree of the thread's era: its LoadHIP.cmake asks find_package(HIP 1.0), as
    # pytorch v2.3.0's did (pytorch/pytorch#128313); the v2.9.1 fixture asks no version.
    work = ctx.tree(ref="v2.4.0")
    return Scenario(work, env={"CMAKE_PREFIX_PATH": str(prefix)}), Scenario(work)


def c30(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()
    return Scenario(work, env={"ROCMFORGE_COMPANIONS": "xformers"}), None


def tmpdir(size: str) -> Callable[[Ctx], tuple[Scenario, Scenario | None]]:
    def setup(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
        small = ctx.tmpfs(size)
        work = ctx.tree()
        return Scenario(work, env={"TMPDIR": str(small)}), Scenario(work, unset=("TMPDIR",))
    return setup


def c33(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    work = ctx.tree()
    env = {"ROCMFORGE_CACHE": "sccache", "SCCACHE_REDIS": "redis://127.0.0.1:9"}
    return Scenario(work, env=env), Scenario(work, env={"ROCMFORGE_CACHE": "sccache"},
                                             unset=("SCCACHE_REDIS",))


def c34(ctx: Ctx) -> tuple[Scenario, Scenario | None]:
    """A file: PEP 503 index holding rocm 7.13.0a20260421 but not the pinned a20260422."""
    index = ctx.root / "sdk-index"
    for project, files in {
        "rocm": ["rocm-7.13.0a20260421.tar.gz"],
        "rocm-sdk-core": ["rocm_sdk_core-7.13.0a20260421-py3-none-linux_x86_64.whl"],
        "rocm-sdk-device-gfx942": [
            "rocm_sdk_device_gfx942-7.13.0a20260421-py3-none-linux_x86_64.whl"],
    }.items():
        (index / project).mkdir(parents=True)
        links = "".join(f'<a href="{f}">{f}</a><br/>\n' for f in files)
        (index / project / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    work = ctx.tree()
    url = index.as_uri() + "/"
    return (Scenario(work, arch="gfx942", env={"ROCMFORGE_ROCM_SDK": url,
                                               "ROCMFORGE_ROCM_SDK_VERSION": "7.13.0a20260422"}),
            Scenario(work, arch="gfx942", env={"ROCMFORGE_ROCM_SDK": url,
                                               "ROCMFORGE_ROCM_SDK_VERSION": "7.13.0a20260421"}))


CASES = [
    Case("c01", "robertrosenbusch/gfx803_rocm#17", "cmake",
         "CMake 4.x (/opt/rf-cmake4) first on PATH; the tree's third_party/protobuf/cmake "
         "declares 3.1.3", c01, check("cmake policy"), policy_set_by_build),
    Case("c02", "pytorch/pytorch#154096", "cmake",
         "CMake 4.x first on PATH; the 3.1.3 project is one configure downloads (not in the "
         "tree)", c02, check("cmake policy"), policy_set_by_build),
    Case("c03", "pytorch/pytorch#80212", "cmake",
         "the tree's CMakeLists.txt needs 3.27; Debian's real cmake 3.25.1", c03, check("cmake")),
    Case("c03h", "pytorch/pytorch#80212", "cmake",
         "variant: as c03, the tree cloned into src/pytorch by hand (no lock file), "
         "--ref v2.9.1", c03h, check("cmake"), counted=False),
    Case("c04", "ROCm/legacy-rocm-build#2639", "host-compiler",
         "hipcc given a GCC 13 install (crtbegin.o, libgcc) without C++ headers "
         "(HIPCC_COMPILE_FLAGS_APPEND=--gcc-toolchain=...), gfx90a", c04, check("compile gfx")),
    Case("c05", "ggml-org/llama.cpp#6523", "host-compiler",
         "as c04 with a GCC 12 install without headers, gfx1030", c05, check("compile gfx")),
    Case("c07", "ROCm/composable_kernel#2887", "host-compiler",
         "Fedora's CXXFLAGS (-Wp,-D_GLIBCXX_ASSERTIONS) exported", c07,
         lambda r: r["check"].startswith("compile gfx") or r["check"] == "libstdc++ assertions"),
    Case("c08", "ROCm/composable_kernel#1405", "host-compiler",
         "CXXFLAGS=-O2 -D_GLIBCXX_ASSERTIONS exported", c08,
         lambda r: r["check"].startswith("compile gfx") or r["check"] == "libstdc++ assertions"),
    Case("c10", "ROCm/TheRock#3311", "python-packaging",
         "the tree's setup.py imports pkg_resources; no build venv yet (the build installs "
         "the newest setuptools, 82)", c10, check("setuptools"), pinned_setuptools),
    Case("c10v", "ROCm/TheRock#3311", "python-packaging",
         "variant: the build venv already has setuptools 82.0.0 (from the index)", c10v,
         check("setuptools"), pinned_setuptools, counted=False),
    Case("c10d", "ROCm/TheRock#3311", "python-packaging",
         "variant: setuptools 82.0.0 in the venv, the import in tools/setup_helpers/env.py",
         c10d, check("setuptools"), pinned_setuptools, counted=False),
    Case("c12", "state-spaces/mamba#595", "triton",
         "the build venv is one holding PyPI's triton 3.6.0 (CUDA build)", c12,
         lambda r: r["check"] in ("build venv", "triton")),
    Case("c14", "ROCm/TheRock#2106", "aotriton", "--arch gfx1030", aotriton("gfx1030"),
         check("feature flash_attention"), left_out),
    Case("c15", "ROCm/TheRock#4001", "aotriton", "--arch gfx900", aotriton("gfx900"),
         check("feature flash_attention"), left_out),
    Case("c16", "ROCm/TheRock#3759", "aotriton", "--arch gfx906", aotriton("gfx906"),
         check("feature flash_attention"), left_out),
    Case("c18", "ROCm/composable_kernel#1855", "composable-kernel",
         "the tree vendors CK (ck.hpp's groups, CMakeLists.txt's lists); --arch gfx90c",
         ck("gfx90c"), check("Composable Kernel")),
    Case("c19", "ROCm/TheRock#1245", "composable-kernel",
         "the tree vendors CK (ck.hpp's groups, CMakeLists.txt's lists); --arch gfx906",
         ck("gfx906"), check("Composable Kernel")),
    Case("c20", "ROCm/composable_kernel#3185", "composable-kernel",
         "the tree vendors CK (ck.hpp's groups, CMakeLists.txt's lists); --arch gfx1012",
         ck("gfx1012"), check("Composable Kernel")),
    Case("c21", "pytorch/pytorch#119081", "missing-component",
         "Debian's ROCm 5.2 has no hipblaslt package (this machine as it is)", c21,
         check("ROCm components", "hipblaslt")),
    Case("c25", "lamikr/rocm_sdk_builder#176", "rocm-install",
         "a copy of Debian's real libamdhip64.so.5 in a leftover lib dir on LD_LIBRARY_PATH",
         c25, check("HIP runtime copies")),
    Case("c27", "HewlettPackard/shs-ccl-docs#17", "rocm-install",
         "ROCM_PATH/HIP_PATH exported to another ROCm root (6.2.0) while PATH's hipcc is /usr's",
         c27, lambda r: r["check"] in ("ROCm install", "ROCM_PATH/HIP_PATH", "hipcc on PATH")),
    Case("c28", "ROCm/hip#3520", "missing-component",
         "CMAKE_PREFIX_PATH holds a hip config whose version file refuses find_package(hip 1.0) "
         "(real cmake: refused with 1.0, accepted without a version); the v2.4.0-era tree, "
         "whose LoadHIP.cmake asks HIP 1.0",
         c28, lambda r: r["check"] == "CMAKE_PREFIX_PATH"),
    Case("c30", "facebookresearch/xformers#1409", "out-of-memory",
         "--with xformers (ROCMFORGE_COMPANIONS) on this 23.5 GiB, 2-core machine", c30,
         lambda r: "memory" in r["check"] or "xformers" in r["check"]),
    Case("c31", "pytorch/pytorch#2046", "disk-full",
         "TMPDIR on a real 64 MiB tmpfs (the work dir's disk has room)", tmpdir("64m"),
         check("temp dir")),
    Case("c32", "rocm-arch/tensorflow-rocm#15", "disk-full",
         "TMPDIR on a real 4 GiB tmpfs", tmpdir("4g"), check("temp dir")),
    Case("c33", "mozilla/sccache#1751", "compiler-cache",
         "cache=sccache, SCCACHE_REDIS=redis://127.0.0.1:9 (closed port), sccache on PATH",
         c33, check("sccache storage")),
    Case("c34", "ROCm/TheRock#4746", "sdk-index",
         "rocm_sdk_version 7.13.0a20260422 against a file: index that has only a20260421",
         c34, check("ROCm SDK index")),
]

# Conditions judged by reading the code that decides them (not made on this machine).
BY_READING = [
    ("c06", "ROCm/rocSOLVER#1026", "host-compiler", "STOP",
     "no GCC 15 here; the compile probe (probes/compile_probe.py) compiles std::array "
     "subscripts in device code with the selected GCC's libstdc++, the shape that fails "
     "(`compile gfxN` FAILs, reason __glibcxx_assert_fail)"),
    ("c09", "ROCm/rocSOLVER#1013", "host-compiler", "MISSED",
     "the probe compiles with the build's macro flags (-D/-U from CFLAGS/CXXFLAGS/CPPFLAGS) "
     "only: a debug build's own flags (CMAKE_BUILD_TYPE=Debug, DEBUG=1, -O0 where GCC 15 "
     "turns assertions on) are not probed"),
    ("c11", "vllm-project/vllm#38614", "python-packaging", "AVOIDED",
     "extensions are built with `pip wheel --no-build-isolation` in the build venv "
     "(config/extensions.toml header; steps/extensions): pip cannot fetch PyPI's torch"),
    ("c13", "triton-lang/triton#4550", "triton", "WARN",
     "`Triton LLVM download` (plan/triton_llvm_rows.py): an HTTP 4xx for the pin's archive "
     "FAILs with --triton source and WARNs in auto (the default); offline here it WARNs "
     "`cannot check offline` (seen in every run above)"),
    ("c17", "NixOS/nixpkgs#439056", "aotriton", "WARN",
     "`AOTriton download` (plan/download_rows.py): offline WARNs; needs a ROCm with an "
     "AOTriton image (not 5.2) to appear"),
    ("c22", "ROCm/hipBLASLt#516", "math-library", "WARN",
     "`kernels hipblaslt` (plan/kernel_rows.py, config/rocm_kernels.toml): hipBLASLt without "
     "a requested target WARNs with the variables that keep torch off it; no hipblaslt here"),
    ("c23", "microsoft/onnxruntime#16566", "gpu-target", "AVOIDED",
     "without --arch the targets are the GPUs found (plan/doctor.py `targets`), so the GPU's "
     "target is always built; an --arch list that leaves out a GPU found WARNs (`targets vs "
     "GPUs`); no AMD GPU here (needs KFD sysfs)"),
    ("c24", "ROCm/bitsandbytes#29", "gpu-target", "AVOIDED",
     "the kit sets each extension's own targets variable (config/extensions.toml "
     "targets_var, BNB_ROCM_ARCH for bitsandbytes) from the build's targets"),
    ("c26", "YellowRoseCx/koboldcpp-rocm#130", "rocm-install", "AVOIDED",
     "discovery (probes/rocm.py) takes ROCM_PATH, HIP_PATH, /opt/rocm*, /usr; the build "
     "exports ROCM_PATH and HIP_PATH as the install it chose (`ROCM_PATH/HIP_PATH` row); "
     "needs writing /opt to make here"),
    ("c29", "ROCm/pytorch#2411", "rocm-install", "WARN",
     "`ROCm for PyTorch`: ROCm 7.0 newer than release 2.7's wheels WARNs and names a newer "
     "release; config/upstream_fixes.toml has no entry for pytorch/pytorch#158889 (the "
     "libamdhip64.so.7 load fix), so nothing is cherry-picked for it"),
]


def _arguments(argv: list[str]) -> argparse.Namespace:
    """--json and case ids; an unknown flag or id is exit 2 before anything is made."""
    known = sorted({c.id for c in CASES} | {row[0] for row in BY_READING})
    parser = argparse.ArgumentParser(
        prog="preflight_round.py", description="Replay the preflight round's reproducible "
        "conditions and run the real `invoke doctor --json` against each (needs root).")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("ids", nargs="*", metavar="ID", help="only these cases (c01 ... c34)")
    args = parser.parse_args(argv)
    unknown = [i for i in args.ids if i not in known]
    if unknown:
        parser.error(f"no case {', '.join(unknown)}: the cases are {', '.join(known)}")
    return args


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    as_json, only = args.json, list(args.ids)
    if os.geteuid() != 0:
        raise SystemExit("needs root for mount -t tmpfs (cases c31, c32)")
    results = []
    with tempfile.TemporaryDirectory(prefix="pfround-") as tmp:
        ctx = Ctx(root=Path(tmp), repo=build_era_repo(Path(tmp) / "repo"))
        try:
            for case in CASES:
                if only and case.id not in only:
                    continue
                with_it, without = case.setup(ctx)
                _rc, rows = run_doctor(ctx, with_it)
                outcome, seen, how = grade(case, rows, with_it.env)
                control = ""
                if without is not None:
                    control = grade(case, run_doctor(ctx, without)[1], without.env)[0]
                    control = "clean" if control == "MISSED" else control
                results.append({
                    "id": case.id, "thread": case.thread, "class": case.klass,
                    "made": case.made, "outcome": outcome, "control": control,
                    "rows": [f"{r['status']} {r['check']}: {r['detail']}" for r in seen],
                    "avoided_by": how, "reproduced": True, "counted": case.counted})
                print(f"{case.id} {outcome} (control {control or '-'})", file=sys.stderr)
        finally:
            for where in ctx.mounts:
                subprocess.run(["umount", str(where)], check=False)
    for cid, thread, klass, outcome, why in BY_READING:
        if only and cid not in only:
            continue
        results.append({"id": cid, "thread": thread, "class": klass, "made": "by reading",
                        "outcome": outcome, "control": "", "rows": [], "avoided_by": why,
                        "reproduced": False, "counted": True})
    results.sort(key=lambda r: r["id"])
    if as_json:
        print(json.dumps(results, indent=1))
        return 0
    print("| id | thread | class | condition made here | outcome | without it | rows / how |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        said = r["avoided_by"] or "; ".join(r["rows"]) or "no row names it"
        said = said.replace("|", "\\|").replace("\n", " ")
        print(f"| {r['id']} | {r['thread']} | {r['class']} | {r['made']} | "
              f"{r['outcome']}{'' if r['reproduced'] else ' (by reading)'}"
              f"{'' if r['counted'] else ' (variant, not counted)'} | "
              f"{r['control'] or '-'} | {said[:400]} |")
    print()
    print(summary(results))
    return 0


def summary(results: list[dict]) -> str:
    """Counts of the counted cases: all, reproduced, by reading, and per class."""
    kinds = ("STOP", "WARN", "AVOIDED", "MISSED")
    counted = [r for r in results if r["counted"]]

    def line(label: str, rs: list[dict]) -> str:
        got = {k: sum(r["outcome"] == k for r in rs) for k in kinds}
        return (f"| {label} | {len(rs)} | " + " | ".join(str(got[k]) for k in kinds) + " |")

    out = ["| cases | N | stop | warn | avoided | missed |",
           "| --- | --- | --- | --- | --- | --- |",
           line("all", counted), line("reproduced here", [r for r in counted if r["reproduced"]]),
           line("by reading", [r for r in counted if not r["reproduced"]])]
    for klass in sorted({r["class"] for r in counted}):
        out.append(line(klass, [r for r in counted if r["class"] == klass]))
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
