"""The planning half is pure: `plan_prepared(settings, facts)` on facts built by hand.

Machines written out here as BuildFacts (what plan.gather would have found), planned with
every file read, clock and environment read refused (the conftest guard refuses processes and
sockets): the exact pip, setup.py/build and venv command lines and the build environment each
plan holds. The kit's tables are read while the facts are made (as plan.gather reads them);
every functools cache of the kit is emptied before planning, so a table the planner read on
its own would open its file and fail the test. A plan with add-ons (a companion and a `--with`
recipe whose source is resolved, as plan.gather resolves it) is planned under the same guard,
from the add-on tables the facts hold.
"""

from __future__ import annotations

import builtins
import dataclasses
import io
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from rocmforge.errors import TASK_PREFIX_ENV, ConfigError, UsageError
from rocmforge.knowledge.addon_table import load_addon_tables
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.extensions import load_extensions, parse_source
from rocmforge.knowledge.features import load_aotriton_table, load_features
from rocmforge.knowledge.releases import pytorch_release_for, rocm_release_for
from rocmforge.knowledge.rocm_sdk import load_sdk_table
from rocmforge.knowledge.targets import requested_targets
from rocmforge.plan.facts import BuildFacts
from rocmforge.plan.features import AotritonState
from rocmforge.plan.gather import build_config
from rocmforge.plan.prepare import PreparedBuild, plan_prepared
from rocmforge.plan.pytorch import PytorchSide
from rocmforge.plan.pytorch_facts import effective_release, facts_for
from rocmforge.plan.rocm_sdk import sdk_plan
from rocmforge.probes.compilers import HostCompiler
from rocmforge.probes.facts import Facts
from rocmforge.probes.gpus import GpuScan
from rocmforge.probes.rocm import RocmInstall
from rocmforge.probes.system import DeviceAccess, PythonEnv, SystemFacts, ToolVersion
from rocmforge.settings import Settings
from rocmforge.workdir import workdir_for

REPO = "https://github.com/pytorch/pytorch.git"
TRITON_INDEX = "https://download.pytorch.org/whl/rocm{rocm}"
NO_GPU = GpuScan(agents=(), source="", tried=("kfd sysfs: absent",), overrides=())


class ReadInPlanner(AssertionError):
    """The planner touched a file, the clock or the environment."""


def _refuse(what: str):  # noqa: ANN202 - any signature
    def refused(*args: object, **kwargs: object) -> object:
        raise ReadInPlanner(f"the pure planner called {what}{args[:1]!r}")
    return refused


class _NoEnviron(dict[str, str]):
    """os.environ for the planner: reading it fails the test. One variable answers: an
    error's paragraph asks how the user types the kit's tasks (errors.task_names reads
    ROCMFORGE_TASK_PREFIX when the error is made); "" is the plain `invoke <task>`."""

    def __getitem__(self, key: str) -> str:
        raise ReadInPlanner(f"the pure planner read os.environ[{key!r}]")

    def get(self, key: str, default: object = None) -> str:  # type: ignore[override]
        if key == TASK_PREFIX_ENV:
            return ""
        raise ReadInPlanner(f"the pure planner read os.environ.get({key!r})")

    def items(self):  # type: ignore[no-untyped-def]  # noqa: ANN201
        raise ReadInPlanner("the pure planner read os.environ.items()")


def _empty_kit_caches() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith("rocmforge") or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", "") == name:
                clear()


@contextmanager
def nothing_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """While inside: no file opened or listed or stat'ed, no clock, no os.environ."""
    _empty_kit_caches()
    with monkeypatch.context() as patch:
        for module, names in ((builtins, ("open",)), (io, ("open", "open_code")),
                              (os, ("open", "stat", "lstat", "listdir", "scandir", "access",
                                    "getcwd", "readlink")),
                              (time, ("time", "time_ns", "monotonic", "perf_counter"))):
            for attr in names:
                patch.setattr(module, attr, _refuse(f"{module.__name__}.{attr}"))
        patch.setattr(os, "environ", _NoEnviron())
        yield


def _system(cores: int, mem_gib: float) -> SystemFacts:
    return SystemFacts(
        cores=cores, mem_total_gib=mem_gib, mem_available_gib=mem_gib - 2, work_dir=Path("/w"),
        disk_checked_at=Path("/"), disk_free_gib=500.0,
        cmake=ToolVersion(path=Path("/usr/bin/cmake"), version="3.31.6"),
        ninja=ToolVersion(path=Path("/usr/bin/ninja"), version="1.12.1"),
        python=PythonEnv(executable="/usr/bin/python3", version="3.11.7", in_venv=False,
                         in_conda=False),
        triton=(),
        devices=DeviceAccess(kfd_present=False, kfd_rw=False, render_group_exists=True,
                             in_render_group=False, is_root=False),
        os_release={"ID": "ubuntu", "VERSION_ID": "24.04"})


def _rocm(version: str, llvm: int) -> RocmInstall:
    root = Path(f"/opt/rocm-{version}")
    return RocmInstall(root=root, version=version, source="/opt/rocm*",
                       version_source=".info/version", hipcc=root / "bin" / "hipcc",
                       clang=root / "lib" / "llvm" / "bin" / "clang++", llvm_major=llvm,
                       device_lib_dir=root / "lib" / "llvm" / "amdgcn" / "bitcode",
                       layout=f"legacy /opt/rocm-{version}")


def _gcc(major: int, version: str) -> HostCompiler:
    return HostCompiler(kind="gcc", major=major, version=version,
                        cc=Path(f"/usr/bin/gcc-{major}"), cxx=Path(f"/usr/bin/g++-{major}"))


def _settings(ref: str, arch: str) -> Settings:
    return Settings(arch=arch, work_dir="/w", pytorch_repo=REPO, pytorch_ref=ref,
                    triton_index=TRITON_INDEX, python="/usr/bin/python3", gcc=0)


def _facts(settings: Settings, rocm: RocmInstall, system: SystemFacts,
           compilers: tuple[HostCompiler, ...], environ: Mapping[str, str]) -> BuildFacts:
    """What plan.gather would have found on that machine before a checkout (tables read here,
    as the gatherer reads them)."""
    tree = facts_for(settings.pytorch_ref, None)
    row = pytorch_release_for(settings.pytorch_ref)
    return BuildFacts(
        machine=Facts(rocm_installs=(rocm,), rocm=rocm, rocm_problem="", path_warnings=(),
                      hipcc_owner=rocm, gpus=NO_GPU, system=system, environ_flags={},
                      compilers=compilers, host_compiler=compilers[0]),
        workdir=workdir_for("/w"),
        pytorch=PytorchSide(facts=tree, release=effective_release(tree, row), from_tree=False),
        targets=tuple(requested_targets(settings.arch, (), load_arch_table())),
        environ=tuple(environ.items()),
        config=build_config(),
        rocm_release=rocm_release_for(rocm.version),
        feature_specs=tuple(load_features()),
        aotriton=AotritonState(release=None, table=load_aotriton_table(), fetch=None,
                               prefix=None),
    )


def _planned(monkeypatch: pytest.MonkeyPatch, settings: Settings,
             facts: BuildFacts) -> PreparedBuild:
    plan_prepared(settings, facts)  # every module the planner imports is imported now
    with nothing_read(monkeypatch):
        return plan_prepared(settings, facts)


def _steps(prepared: PreparedBuild) -> dict[str, tuple[str, ...]]:
    return {step.name: step.argv for step in prepared.plan.steps}


def _commands(prepared: PreparedBuild, name: str) -> tuple[tuple[str, ...], ...]:
    """The command lines a python-kind step runs (its effects), for one step."""
    step = next(step for step in prepared.plan.steps if step.name == name)
    assert step.effects is not None
    return step.effects.commands


def test_a_2_8_plan_on_rocm_6_4_with_gcc_12_reads_nothing(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    settings = _settings("v2.8.0", "gfx1100")
    facts = _facts(settings, _rocm("6.4.1", 19), _system(cores=32, mem_gib=64.0),
                   (_gcc(12, "12.3.0"),), {"HOME": "/home/u", "CFLAGS": "-O2 -g"})
    prepared = _planned(monkeypatch, settings, facts)
    steps = _steps(prepared)
    assert steps["venv"] == ("/usr/bin/python3", "-m", "venv", "/w/venv")
    assert steps["configure"] == ("/w/venv/bin/python", "setup.py", "build")
    assert steps["build"] == ("/w/venv/bin/python", "setup.py", "bdist_wheel")
    assert _commands(prepared, "build-requirements") == (
        ("/w/venv/bin/python", "-m", "pip", "install", "-r", "requirements.txt", "-r",
         "requirements-build.txt"),)
    env = dict(prepared.inputs.env)
    assert (env["CC"], env["CXX"]) == ("/usr/bin/gcc-12", "/usr/bin/g++-12")
    assert env["PYTORCH_ROCM_ARCH"] == "gfx1100"
    assert env["ROCM_PATH"] == "/opt/rocm-6.4.1"
    assert env["MAX_JOBS"] == "14"  # min(32 cores, floor(64 GiB / 4.5 GiB per job))
    # config/build.toml [inherit] names CFLAGS: taken from the environment the gatherer kept
    assert env["CFLAGS"] == "-O2 -g" and "HOME" not in env
    assert prepared.inputs.compilers["hip"] == "/opt/rocm-6.4.1/lib/llvm/bin/clang++"
    by_name = {step.name: step for step in prepared.plan.steps}
    assert by_name["configure"].env["CMAKE_ONLY"] == "1"
    assert by_name["build"].env["PYTORCH_ROCM_ARCH"] == "gfx1100"


def test_a_2_9_plan_on_rocm_7_0_for_two_targets_reads_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings("v2.9.1", "gfx942;gfx1100")
    facts = _facts(settings, _rocm("7.0.2", 20), _system(cores=8, mem_gib=16.0),
                   (_gcc(13, "13.3.0"), _gcc(11, "11.4.0")), {"HOME": "/home/u"})
    prepared = _planned(monkeypatch, settings, facts)
    steps = _steps(prepared)
    assert steps["configure"] == ("/w/venv/bin/python", "setup.py", "build")
    assert steps["build"] == ("/w/venv/bin/python", "-m", "build", "--wheel", "--no-isolation")
    assert _commands(prepared, "build-requirements") == (
        ("/w/venv/bin/python", "-m", "pip", "install", "-r", "requirements.txt", "-r",
         "requirements-build.txt"),
        ("/w/venv/bin/python", "-m", "pip", "install", "build"))
    # The compiler policy's choice from the facts' table row: config/rocm.toml recommends
    # GCC 11 for ROCm 7.0, so GCC 11 although GCC 13 is found first.
    assert _commands(prepared, "compilers") == (
        ("/usr/bin/gcc-11", "--version"), ("/usr/bin/g++-11", "--version"),
        ("/opt/rocm-7.0.2/lib/llvm/bin/clang++", "--version"))
    env = dict(prepared.inputs.env)
    assert env["PYTORCH_ROCM_ARCH"] == "gfx942;gfx1100"
    assert env["ROCM_PATH"] == "/opt/rocm-7.0.2"
    assert env["MAX_JOBS"] == "3"  # min(8 cores, floor(16 GiB / 4.5 GiB per job))


def test_a_plan_on_the_pip_sdk_to_come_reads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rocm_sdk setting before the SDK is in the venv: the ROCm the plan stands on is the
    SDK to come (as plan.gather puts it in the facts), its pip line the table's route."""
    version = "10.1.0a20260811"  # a multi-arch nightly (ROCm/TheRock#7328)
    index = "https://rocm.nightlies.amd.com/whl-multi-arch/"
    settings = dataclasses.replace(_settings("v2.9.1", "gfx1100"), rocm_sdk_version=version)
    sdk_root = RocmInstall(root=Path("/w/venv"), version=version, source="rocm_sdk setting",
                           version_source="the rocm_sdk_version setting",
                           layout="pip SDK (installed by the rocm-sdk step)")
    facts = dataclasses.replace(
        _facts(settings, _rocm("7.0.2", 20), _system(cores=8, mem_gib=16.0),
               (_gcc(11, "11.4.0"),), {}),
        sdk=sdk_plan(settings, ["gfx1100"], load_sdk_table(), sdk_root))
    facts = dataclasses.replace(facts, machine=dataclasses.replace(facts.machine, rocm=sdk_root))
    prepared = _planned(monkeypatch, settings, facts)
    assert _commands(prepared, "rocm-sdk") == (
        ("/w/venv/bin/python", "-m", "pip", "install", "--index-url", index,
         f"rocm[libraries,devel,device-gfx1100]=={version}"),
        ("/w/venv/bin/rocm-sdk", "init"))
    env = dict(prepared.inputs.env)
    # The wheel's runtime requirement; no local version before the checkout (version.txt).
    assert env["PYTORCH_EXTRA_INSTALL_REQUIREMENTS"] == f"rocm[libraries,device-gfx1100]=={version}"
    assert "PYTORCH_BUILD_VERSION" not in env


def test_the_planner_is_a_function_of_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same settings and facts plan the same steps, digest for digest, twice."""
    settings = _settings("v2.8.0", "gfx1100")
    facts = _facts(settings, _rocm("6.4.1", 19), _system(cores=32, mem_gib=64.0),
                   (_gcc(12, "12.3.0"),), {})
    one = _planned(monkeypatch, settings, facts)
    two = _planned(monkeypatch, settings, facts)
    assert [s.digest() for s in one.plan.steps] == [s.digest() for s in two.plan.steps]


def test_the_guard_catches_a_file_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard itself: a table read inside it (a load the planner might make) fails."""
    load_arch_table()
    with nothing_read(monkeypatch), pytest.raises(ReadInPlanner):
        load_arch_table()


def test_a_refused_cache_remote_is_said_after_the_compiler_choice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The gatherer keeps the refusal as data; the planner raises it where the environment is
    made, so a machine without a compiler still hears about the compiler first."""
    settings = _settings("v2.8.0", "gfx1100")
    refused = ConfigError("cache_remote 'ftp://x' is no cache backend the kit knows",
                          "sccache speaks s3, redis, webdav, gha, gcs, azure and memcached",
                          "pass cache_remote=redis://host:6379")
    facts = dataclasses.replace(
        _facts(settings, _rocm("6.4.1", 19), _system(cores=32, mem_gib=64.0),
               (_gcc(12, "12.3.0"),), {}), remote_cache_refused=refused)
    plan_prepared(settings, dataclasses.replace(facts, remote_cache_refused=None))  # imports
    with nothing_read(monkeypatch), pytest.raises(ConfigError) as caught:
        plan_prepared(settings, facts)
    assert caught.value is refused
    no_compiler = dataclasses.replace(facts, machine=dataclasses.replace(
        facts.machine, compilers=(), host_compiler=None))
    with nothing_read(monkeypatch), pytest.raises(UsageError) as first:
        plan_prepared(settings, no_compiler)
    assert "No host C/C++ compiler pair was found on PATH" in str(first.value)


BNB_COMMIT = "1" * 40  # what the remote's main named when plan.gather asked (a fact here)


def test_a_plan_with_a_companion_and_an_extension_reads_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--with torchvision,bitsandbytes`: the add-on tables and the extension's resolved source
    are facts; the planner reads neither config/companions.toml nor extensions.toml."""
    settings = dataclasses.replace(_settings("v2.8.0", "gfx1100"),
                                   companions=("torchvision", "bitsandbytes"))
    source = dataclasses.replace(parse_source("bitsandbytes", load_extensions(), {}, "2.8.0"),
                                 commit=BNB_COMMIT)
    facts = dataclasses.replace(
        _facts(settings, _rocm("6.4.1", 19), _system(cores=32, mem_gib=64.0),
               (_gcc(12, "12.3.0"),), {}),
        extension_sources=(source,), addon_tables=load_addon_tables())
    prepared = _planned(monkeypatch, settings, facts)
    steps = _steps(prepared)
    names = list(steps)
    assert names[names.index("install"):] == [
        "install", "torchvision-checkout", "torchvision-pairing", "torchvision-patches",
        "torchvision-build", "bitsandbytes-checkout", "bitsandbytes-pairing",
        "bitsandbytes-patches", "bitsandbytes-prepare-1", "bitsandbytes-prepare-2",
        "bitsandbytes-build", "companions-collect", "companions-install"]
    wheel = ("/w/venv/bin/python", "-m", "pip", "wheel", "--verbose", "--no-build-isolation",
             "--no-deps", "--wheel-dir")
    assert steps["torchvision-build"] == (*wheel, "/w/src/torchvision/dist", ".")
    assert steps["bitsandbytes-build"] == (*wheel, "/w/src/bitsandbytes/dist", ".")
    # The recipe's CMake lines, filled from the targets and the install's ROCm 6.4 ("64").
    assert steps["bitsandbytes-prepare-1"] == (
        "cmake", "-DCOMPUTE_BACKEND=hip", "-DBNB_ROCM_ARCH=gfx1100", "-DROCM_VERSION=64",
        "-S", ".", "-B", "build")
    assert steps["bitsandbytes-prepare-2"] == ("cmake", "--build", "build")
    assert steps["torchvision-checkout"] == ("companion-checkout", "torchvision")
    assert steps["bitsandbytes-pairing"] == ("extension-pairing", "bitsandbytes",
                                             "/w/venv/bin/python")
    assert _commands(prepared, "companions-install") == (
        ("/w/venv/bin/python", "-m", "pip", "install", "--no-deps", "--force-reinstall",
         "/w/dist/<torchvision wheel>", "/w/dist/<bitsandbytes wheel>"),)
    by_name = {step.name: step for step in prepared.plan.steps}
    assert by_name["bitsandbytes-build"].env["BNB_ROCM_ARCH"] == "gfx1100"
    assert by_name["torchvision-build"].env["FORCE_CUDA"] == "1"
    assert by_name["bitsandbytes-checkout"].inputs["repo"] == source.repo
    torchvision = by_name["torchvision-checkout"]
    assert torchvision.inputs["ref"] == "v0.23.0"  # the release config/companions.toml pairs


def test_add_ons_without_their_tables_in_the_facts_would_read_a_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard sees the tables: facts that lack them leave the planner to read the files."""
    settings = dataclasses.replace(_settings("v2.8.0", "gfx1100"), companions=("torchvision",))
    facts = _facts(settings, _rocm("6.4.1", 19), _system(cores=32, mem_gib=64.0),
                   (_gcc(12, "12.3.0"),), {})
    plan_prepared(settings, facts)  # imports
    with nothing_read(monkeypatch), pytest.raises(ReadInPlanner):
        plan_prepared(settings, facts)
