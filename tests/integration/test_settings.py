"""Settings precedence, end to end: config/ < invoke.yaml (rocm:) < ROCMFORGE_* < flags.

A real project directory with its own tasks.py (using the kit's collection) and invoke.yaml is
created in a temp dir, and `invoke env --format json` is run there; PYTORCH_ROCM_ARCH and MAX_JOBS
show which layer won. Bad values must end with exit 2, one paragraph, no traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.errors import UsageError
from rocmforge.settings import defaults_from_config, resolve

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.needs_tool("hipcc")  # `env` needs a ROCm install: Debian's under /usr


def test_resolve_layers_in_order() -> None:
    defaults = defaults_from_config()
    s = resolve(
        defaults={**defaults, "arch": "gfx900", "max_jobs": 3},
        invoke_config={"arch": "gfx90a", "max_jobs": 5},
        environ={"ROCMFORGE_ARCH": "gfx908"},
        flags={"arch": "gfx1030", "rocm_path": ""},
    )
    assert (s.arch, s.max_jobs) == ("gfx1030", 5)
    assert s.origins["arch"] == "flag --arch"
    assert s.origins["max_jobs"] == "invoke.yaml (rocm:)"
    assert s.origins["rocm_path"] == "config/defaults.toml"  # an empty flag is "not given"


def project(tmp_path: Path, yaml_text: str | None, defaults_patch: str = "") -> tuple[Path, dict]:
    proj = tmp_path / "proj"
    proj.mkdir()
    proj.joinpath("tasks.py").write_text("from rocmforge.tasks import ns\n")
    if yaml_text is not None:
        proj.joinpath("invoke.yaml").write_text(yaml_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCMFORGE_")}
    env.pop("ROCM_PATH", None)
    env.pop("HIP_PATH", None)
    if defaults_patch:
        config = tmp_path / "config"
        shutil.copytree(REPO / "config", config)
        defaults = config / "defaults.toml"
        text = defaults.read_text().replace('arch = ""', "").replace("max_jobs = 0", "")
        defaults.write_text(text + defaults_patch)
        env["ROCMFORGE_CONFIG_DIR"] = str(config)
    return proj, env


def run_env(proj: Path, env: dict, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["python3", "-m", "invoke", "env", "--format", "json", *flags],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
    )


def values(done: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    return doc["PYTORCH_ROCM_ARCH"], doc["MAX_JOBS"]


@pytest.mark.slow
def test_precedence_end_to_end(tmp_path: Path) -> None:
    proj, env = project(tmp_path, None, 'arch = "gfx900"\nmax_jobs = 3\n')
    assert values(run_env(proj, env)) == ("gfx900", "3")  # config/ only
    proj.joinpath("invoke.yaml").write_text("rocm:\n  arch: gfx90a\n  max_jobs: 5\n")
    assert values(run_env(proj, env)) == ("gfx90a", "5")  # invoke.yaml beats config/
    env["ROCMFORGE_ARCH"] = "gfx908"
    env["ROCMFORGE_MAX_JOBS"] = "7"
    assert values(run_env(proj, env)) == ("gfx908", "7")  # environment beats invoke.yaml
    assert values(run_env(proj, env, "--arch", "gfx1030")) == ("gfx1030", "7")  # flag wins


def assert_one_paragraph_exit_2(done: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    message = done.stderr.strip()
    assert message.count("\n") == 0, message
    for fragment in fragments:
        assert fragment in message


def test_bad_max_jobs_from_environment(tmp_path: Path) -> None:
    proj, env = project(tmp_path, "rocm:\n  arch: gfx90a\n")
    env["ROCMFORGE_MAX_JOBS"] = "abc"
    assert_one_paragraph_exit_2(
        run_env(proj, env),
        "Setting max_jobs from ROCMFORGE_MAX_JOBS",
        "'abc'",
        "a whole number >= 0",
    )


def test_misspelled_environment_variable(tmp_path: Path) -> None:
    proj, env = project(tmp_path, "rocm:\n  arch: gfx90a\n")
    env["ROCMFORGE_ARHC"] = "gfx90a"
    assert_one_paragraph_exit_2(
        run_env(proj, env), "ROCMFORGE_ARHC is not a rocmforge setting", "ROCMFORGE_ARCH"
    )


def test_misspelled_key_in_invoke_yaml(tmp_path: Path) -> None:
    proj, env = project(tmp_path, "rocm:\n  arhc: gfx90a\n")
    assert_one_paragraph_exit_2(run_env(proj, env), 'Unknown setting "arhc"', "arch")


def test_bad_value_in_invoke_yaml(tmp_path: Path) -> None:
    proj, env = project(tmp_path, "rocm:\n  arch: gfx90a\n  max_jobs: -4\n")
    assert_one_paragraph_exit_2(run_env(proj, env),
                                f"Setting max_jobs from {proj / 'invoke.yaml'} (rocm:)")


def test_unit_bad_env_value() -> None:
    with pytest.raises(UsageError, match="which is not a whole number"):
        resolve(defaults={}, environ={"ROCMFORGE_MAX_JOBS": "abc"})


@pytest.mark.parametrize("kind", ["malformed", "unreadable"])
def test_broken_invoke_yaml(tmp_path: Path, kind: str) -> None:
    proj, env = project(tmp_path, None)
    if kind == "malformed":
        proj.joinpath("invoke.yaml").write_text("rocm:\n  arch: [unclosed\n")
    else:
        proj.joinpath("invoke.yaml").mkdir()  # reading it fails (root can read any mode bits)
    assert_one_paragraph_exit_2(run_env(proj, env, "--arch", "gfx90a"), "invoke.yaml")
