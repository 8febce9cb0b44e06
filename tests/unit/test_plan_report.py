"""Rows of the `invoke plan` tables."""

from __future__ import annotations

from rocmforge.execute.model import Plan, Step
from rocmforge.plan.report import settings_rows, step_rows

PLAN = Plan(
    settings={"pytorch_ref": "v2.9.1", "build_env": {"BUILD_TEST": "0"}, "mirrors": {}},
    targets=("gfx1100", "gfx942"),
    steps=(
        Step(name="preflight", argv=("preflight",), why="doctor first", kind="python"),
        Step(name="hipify", argv=("python", "tools/amd_build/build_amd.py"), why="CUDA -> HIP"),
        Step(name="build", argv=("python", "-m", "build", "--wheel", "a b"), why="the wheel"),
    ),
)


def test_settings_rows_flatten_mappings_and_lead_with_targets() -> None:
    assert settings_rows(PLAN) == [
        ("targets", "gfx1100;gfx942"),
        ("pytorch_ref", "v2.9.1"),
        ("build_env", "BUILD_TEST=0"),
        ("mirrors", "(none)"),
    ]


def test_settings_rows_show_resolved_commits() -> None:
    plan = Plan(
        settings={
            "sources": {
                "pytorch": {"commit": "a" * 40},
                "triton": {"pin": {"commit": "b" * 40, "version": "3.5.0"}},
            }
        },
        targets=("gfx90a",),
        steps=(),
    )
    assert settings_rows(plan)[1:] == [
        ("pytorch commit", "a" * 40),
        ("triton pin", f"{'b' * 40} (3.5.0)"),
    ]


def test_a_plain_folder_extension_shows_its_content_digest_not_a_blank_ref() -> None:
    plan = Plan(settings={"companions": [
        {"name": "gamma-ext", "kind": "extension", "ref": "", "form": "folder",
         "repo": "/tmp/fx/my sources/gamma-ext", "digest": "c" * 64},
        {"name": "beta-ext", "kind": "extension", "ref": "d" * 40, "form": "git-folder",
         "repo": "/tmp/fx/beta-ext", "digest": ""}]}, targets=("gfx942",), steps=())
    assert settings_rows(plan)[1:] == [
        ("extension gamma-ext", "content sha256:cccccccccccc of /tmp/fx/my sources/gamma-ext"),
        ("extension beta-ext", f"{'d' * 40} of /tmp/fx/beta-ext"),
    ]


def test_step_rows_show_the_runner_states_and_quote_argv() -> None:
    assert step_rows(PLAN, ["done", "checks", "to run"]) == [
        ("1", "preflight", "done", "[python] preflight", "doctor first"),
        ("2", "hipify", "checks", "python tools/amd_build/build_amd.py", "CUDA -> HIP"),
        ("3", "build", "to run", "python -m build --wheel 'a b'", "the wheel"),
    ]
