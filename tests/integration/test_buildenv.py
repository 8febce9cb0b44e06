"""Build environment: the MAX_JOBS rule, ordered variables, safe printing (eval for real)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from rocmforge.errors import ProbeError, UsageError
from rocmforge.knowledge.targets import TargetId
from rocmforge.plan.environment import (
    BuildEnv,
    build_environment,
    compiler_cache_env,
    fish_quote,
    format_env,
    max_jobs,
)
from rocmforge.settings import Settings

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("cores", "mem", "per_job", "jobs"),
    [
        (64, 32.0, 4.0, 8),
        (2, 23.5, 4.0, 2),
        (16, 3.0, 4.0, 1),
        (8, 1000.0, 4.0, 8),
        (32, 31.9, 4.5, 7),
        (0, 0.0, 4.0, 1),
    ],
)
def test_max_jobs_rule(cores: int, mem: float, per_job: float, jobs: int) -> None:
    assert max_jobs(cores, mem, per_job) == jobs


def facts(root: str = "/opt/rocm-7.0.2", cores: int = 64, mem: float = 32.0) -> SimpleNamespace:
    return SimpleNamespace(
        rocm=SimpleNamespace(root=Path(root)),
        rocm_problem="",
        system=SimpleNamespace(cores=cores, mem_total_gib=mem),
    )


def test_environment_order_and_values() -> None:
    env = build_environment(
        Settings(build_env={"USE_KINETO": "0", "MAX_JOBS": "3"}),
        facts(),
        [TargetId("gfx942"), TargetId("gfx90a", xnack="-")],
        cc="/usr/bin/gcc-11",
        cxx="/usr/bin/g++-11",
    )
    assert env.items == (
        ("USE_ROCM", "1"),
        ("USE_CUDA", "0"),
        ("PYTORCH_ROCM_ARCH", "gfx942;gfx90a:xnack-"),
        ("ROCM_PATH", "/opt/rocm-7.0.2"),
        ("ROCM_HOME", "/opt/rocm-7.0.2"),
        ("HIP_PATH", "/opt/rocm-7.0.2"),
        ("HIP_PLATFORM", "amd"),
        ("CMAKE_POLICY_VERSION_MINIMUM", "3.5"),
        ("CC", "/usr/bin/gcc-11"),
        ("CXX", "/usr/bin/g++-11"),
        ("USE_KINETO", "0"),
        ("MAX_JOBS", "3"),
    )


def test_max_jobs_setting_wins_over_the_rule() -> None:
    env = build_environment(Settings(max_jobs=5), facts(cores=2, mem=4.0), [TargetId("gfx1100")])
    assert env.get("MAX_JOBS") == "5"
    env = build_environment(Settings(), facts(cores=64, mem=32.0), [TargetId("gfx1100")])
    assert env.get("MAX_JOBS") == "7"


def test_no_rocm_or_no_targets_is_an_error() -> None:
    with pytest.raises(ProbeError, match="No ROCm install was found"):
        build_environment(
            Settings(), SimpleNamespace(rocm=None, rocm_problem=""), [TargetId("gfx90a")]
        )
    with pytest.raises(UsageError, match="No GPU target to build for"):
        build_environment(Settings(), facts(), [])


NASTY = BuildEnv(
    items=(("PYTORCH_ROCM_ARCH", "gfx90a;gfx942"), ("X", 'it\'s $(touch pwned) `x` \\ "q"'))
)


def test_sh_format_exact() -> None:
    assert format_env(BuildEnv(items=(("A", "gfx942"), ("B", "a;b"))), "sh") == (
        "export A=gfx942\nexport B='a;b'\n"
    )


def test_sh_eval_is_safe_for_real(tmp_path: Path) -> None:
    script = format_env(NASTY, "sh")
    out = subprocess.run(
        ["bash", "-c", 'eval "$1"; printf "%s|%s" "$PYTORCH_ROCM_ARCH" "$X"', "bash", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == 'gfx90a;gfx942|it\'s $(touch pwned) `x` \\ "q"'
    assert not (tmp_path / "pwned").exists()


def test_fish_quote() -> None:
    assert fish_quote("it's a\\b") == "'it\\'s a\\\\b'"
    assert format_env(BuildEnv(items=(("A", "a;b"),)), "fish") == "set -gx A 'a;b'\n"


def test_json_and_github() -> None:
    assert json.loads(format_env(NASTY, "json"))["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx942"
    assert format_env(BuildEnv(items=(("A", "a;b"),)), "github") == "A=a;b\n"
    with pytest.raises(UsageError, match="contains a line break"):
        format_env(BuildEnv(items=(("A", "one\nB=two"),)), "github")


def test_bad_variable_name_is_refused() -> None:
    with pytest.raises(UsageError, match="is not a valid environment variable name"):
        format_env(BuildEnv(items=(("A;rm -rf /", "x"),)), "sh")


@pytest.mark.needs_tool("hipcc")
def test_invoke_env_mi300_eval_for_real() -> None:
    """Done-when: `invoke env --arch mi300 --format sh` prints the gfx942 export, and eval works."""
    done = subprocess.run(
        ["python3", "-m", "invoke", "env", "--arch", "mi300", "--format", "sh"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "export PYTORCH_ROCM_ARCH=gfx942\n" in done.stdout
    assert "export HIP_PLATFORM=amd\n" in done.stdout
    out = subprocess.run(
        [
            "bash",
            "-c",
            'eval "$(python3 -m invoke env --arch "mi300;gfx90a")"; printf %s "$PYTORCH_ROCM_ARCH"',
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == "gfx942;gfx90a"


def test_invoke_env_bad_format_exits_2() -> None:
    done = subprocess.run(
        ["python3", "-m", "invoke", "env", "--arch", "gfx90a", "--format", "xml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "Unknown format 'xml'" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("flag", "value"), [("--gcc", "abc"), ("--clang", "-1"), ("--gcc", "1.5")]
)
def test_invoke_env_bad_compiler_major_exits_2_without_traceback(flag: str, value: str) -> None:
    """Invoke would cast an int flag in its parser (a traceback); the task checks the text."""
    done = subprocess.run(
        ["python3", "-m", "invoke", "env", "--arch", "gfx90a", flag, value],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    name = flag.lstrip("-")
    assert (f"Setting {name} from flag {flag} has the value {value!r}, which is not a whole number "
            ">= 0") in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


# --- compiler caches ------------------------------------------------------------------------


CACHES = {"ccache": "/usr/bin/ccache", "sccache": "/opt/sccache/bin/sccache"}
LAUNCHERS = ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
             "CMAKE_HIP_COMPILER_LAUNCHER")


@pytest.mark.parametrize(
    ("mode", "found", "launcher"),
    [
        ("auto", CACHES, "/opt/sccache/bin/sccache"),
        ("auto", {"ccache": "/usr/bin/ccache"}, "/usr/bin/ccache"),
        ("ccache", CACHES, "/usr/bin/ccache"),
        ("sccache", CACHES, "/opt/sccache/bin/sccache"),
    ],
)
def test_cache_launchers(mode: str, found: dict[str, str], launcher: str) -> None:
    assert compiler_cache_env(mode, found) == [(name, launcher) for name in LAUNCHERS]


def test_no_cache_when_none_or_nothing_found() -> None:
    assert compiler_cache_env("none", CACHES) == []
    assert compiler_cache_env("auto", {}) == []


def test_hip_device_compiles_are_cached_only_from_the_rocm_that_supports_it() -> None:
    old = compiler_cache_env("ccache", CACHES, rocm_version="7.2", hip_launcher_min_rocm="7.13")
    new = compiler_cache_env("ccache", CACHES, rocm_version="7.13.0", hip_launcher_min_rocm="7.13")
    assert ("HIP_CLANG_LAUNCHER", "/usr/bin/ccache") not in old
    assert new[-1] == ("HIP_CLANG_LAUNCHER", "/usr/bin/ccache")


def test_a_named_cache_that_is_missing_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        compiler_cache_env("sccache", {"ccache": "/usr/bin/ccache"})
    assert caught.value.paragraph() == (
        "The cache setting asks for sccache, but sccache is not on PATH. A build that silently "
        "runs uncached takes hours longer than the user planned. Fix: install it (`apt-get "
        "install sccache`), or set cache to auto or none (ROCMFORGE_CACHE=none)."
    )


@pytest.mark.needs_tool("ccache")
def test_invoke_env_exports_the_real_ccache_found_on_path() -> None:
    import shutil
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ROCMFORGE_CACHE": "ccache"}
    done = subprocess.run(
        [sys.executable, "-m", "invoke", "env", "--arch", "gfx90a", "--format", "json"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    exported = json.loads(done.stdout)
    assert exported["CMAKE_CXX_COMPILER_LAUNCHER"] == shutil.which("ccache")
