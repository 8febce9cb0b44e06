"""The pure build planner: exact steps, argv, env and digest behaviour (no subprocess, no files)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rocmforge.errors import UsageError
from rocmforge.plan.build_plan import BuildOptions, PreflightRow, check_ref_name, plan_build
from rocmforge.workdir import workdir_for

WORK = workdir_for("/w")
SETTINGS = SimpleNamespace(pytorch_repo="https://github.com/pytorch/pytorch.git",
                           pytorch_ref="v2.8.0", mirrors={}, triton_index="https://i/rocm{rocm}",
                           triton_repo="", origins={}, triton_mode="auto", skip_preflight=False,
                           venv_system_site_packages=False)
FACTS = SimpleNamespace(rocm=SimpleNamespace(root=Path("/opt/rocm-6.4.1"), version="6.4.1"))
ENV = {"PYTORCH_ROCM_ARCH": "gfx1100", "USE_CUDA": "0", "MAX_JOBS": "8",
       "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
CC = {"cc": "/usr/bin/gcc-12", "cxx": "/usr/bin/g++-12"}


def _plan(settings: dict | None = None, patches: dict | None = None, **options: object):
    env = dict(ENV)
    targets = options.pop("targets", ("gfx1100",))
    env["PYTORCH_ROCM_ARCH"] = ";".join(targets)  # type: ignore[arg-type]
    chosen = SimpleNamespace(**{**vars(SETTINGS), **(settings or {})})
    return plan_build(chosen, FACTS, targets, workdir=WORK, env=env, compilers=CC,  # type: ignore[arg-type]
                      options=BuildOptions(**options), patch_inputs=patches)  # type: ignore[arg-type]


def test_setup_py_release_runs_configure_then_bdist_wheel() -> None:
    plan = _plan(build_style="setup.py", python="/usr/bin/python3")
    names = [s.name for s in plan.steps]
    assert names == ["preflight", "compilers", "checkout", "tree-facts", "patches", "venv",
                     "build-requirements", "triton", "triton-targets", "environment", "hipify",
                     "stale-check",
                     "configure", "configure-check", "build", "collect", "install"]
    steps = {s.name: s for s in plan.steps}
    assert steps["venv"].argv == ("/usr/bin/python3", "-m", "venv", "/w/venv")
    assert steps["hipify"].argv == ("hipify", "/w/venv/bin/python",
                                    "tools/amd_build/build_amd.py")
    assert steps["hipify"].effects is not None
    assert steps["hipify"].effects.commands == (("/w/venv/bin/python",
                                                 "tools/amd_build/build_amd.py"),)
    assert steps["hipify"].cwd == "/w/src/pytorch"
    assert steps["configure"].argv == ("/w/venv/bin/python", "setup.py", "build")
    assert steps["configure"].env["CMAKE_ONLY"] == "1"
    assert "CMAKE_ONLY" not in steps["build"].env
    assert steps["build"].argv == ("/w/venv/bin/python", "setup.py", "bdist_wheel")
    assert steps["build"].env["USE_CUDA"] == "0"
    assert steps["build"].env["PYTORCH_ROCM_ARCH"] == "gfx1100"


def test_build_style_uses_python_m_build_no_isolation() -> None:
    steps = {s.name: s for s in _plan(build_style="build").steps}
    assert steps["build"].argv == ("/w/venv/bin/python", "-m", "build", "--wheel",
                                   "--no-isolation")


def test_scikit_build_core_has_no_configure_only_step_and_checks_the_build_log() -> None:
    plan = _plan(build_style="build", scikit_build_core=True)
    names = [s.name for s in plan.steps]
    assert "configure" not in names and "configure-check" not in names
    assert names.index("build-check") == names.index("build") + 1
    assert {s.name: s for s in plan.steps}["build-check"].argv == ("log-check", "build")


def test_system_site_packages_flag_reaches_venv_argv() -> None:
    steps = {s.name: s for s in _plan({"venv_system_site_packages": True}, python="py").steps}
    assert steps["venv"].argv == ("py", "-m", "venv", "--system-site-packages", "/w/venv")


def test_target_change_changes_env_and_stale_check_digests_not_checkout() -> None:
    one = {s.name: s.digest() for s in _plan(targets=("gfx1100",)).steps}
    two = {s.name: s.digest() for s in _plan(targets=("gfx1100", "gfx942")).steps}
    changed = sorted(name for name in one if one[name] != two[name])
    assert "environment" in changed and "stale-check" in changed and "build" in changed
    assert "checkout" not in changed and "venv" not in changed and "triton" not in changed
    assert "preflight" not in changed
    # The runner redoes from the first changed step: the Triton target probe (a new target must
    # be checked), after the venv and Triton itself.
    first = next(i for i, s in enumerate(_plan().steps) if one[s.name] != two[s.name])
    assert _plan().steps[first].name == "triton-targets"


def test_identical_inputs_give_identical_digests() -> None:
    assert [s.digest() for s in _plan().steps] == [s.digest() for s in _plan().steps]


def test_only_failing_preflight_rows_enter_the_digest() -> None:
    def first_digest(status: str) -> str:
        plan = plan_build(SETTINGS, FACTS, ("gfx1100",), workdir=WORK, env=ENV, compilers=CC,
                          preflight=(PreflightRow(status=status, check="disk"),))
        assert plan.steps[0].name == "preflight"
        return plan.steps[0].digest()

    # A new WARN (less free disk) must not redo a finished build; a FAIL must rerun preflight.
    assert first_digest("OK") == first_digest("WARN")
    assert first_digest("OK") != first_digest("FAIL")


def test_patch_hashes_enter_the_patches_digest_and_settings_drive_triton() -> None:
    one = {s.name: s for s in _plan(patches={"patch:pytorch/0001-a.patch": "a" * 64}).steps}
    two = {s.name: s for s in _plan(patches={"patch:pytorch/0001-a.patch": "b" * 64}).steps}
    assert one["patches"].inputs["patch:pytorch/0001-a.patch"] == "a" * 64
    assert one["patches"].digest() != two["patches"].digest()
    assert one["checkout"].digest() == two["checkout"].digest()
    steps = {s.name: s for s in _plan({"triton_mode": "wheel"}).steps}
    assert steps["triton"].argv == ("triton", "wheel", "/w/venv/bin/python")
    skipped = _plan({"skip_preflight": True, "triton_mode": "skip"})
    assert skipped.steps[0].inputs["skip"] == "True"
    assert skipped.settings["triton_mode"] == "skip"


def test_plan_json_is_versioned_and_lists_every_step() -> None:
    doc = _plan({"triton_mode": "skip"}).to_json()
    assert doc["schema"] == "rocmforge.plan/1"
    assert doc["targets"] == ["gfx1100"]
    assert len(doc["steps"]) == 16
    assert any("Triton is skipped" in note for note in doc["notes"])


def test_unknown_options_are_refused() -> None:
    with pytest.raises(ValueError, match="build_style must be one of"):
        _plan(build_style="make")
    with pytest.raises(ValueError, match="triton_mode must be one of"):
        _plan({"triton_mode": "maybe"})


@pytest.mark.parametrize("ref", ["v2.9.1", "main", "release/2.9", "a" * 40, "my-branch_1"])
def test_ref_names_git_accepts_are_planned(ref: str) -> None:
    check_ref_name(ref)
    assert _plan({"pytorch_ref": ref}).settings["pytorch_ref"] == ref


@pytest.mark.parametrize("ref", ["", " ", "a b", "v2..9", "-x", ".hidden", "x/", "x.",
                                 "a.lock", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b",
                                 "a@{1}", "a//b", "a/.b", "@", "tab\there"])
def test_ref_names_git_refuses_are_usage_errors(ref: str) -> None:
    with pytest.raises(UsageError) as info:
        _plan({"pytorch_ref": ref})
    assert info.value.what == f"{ref!r} (setting pytorch_ref) cannot be a git tag, branch or " \
        "commit"
    assert info.value.exit_code == 2


def test_a_ref_outside_the_version_table_gets_a_note_and_main_does_not() -> None:
    branch = _plan({"pytorch_ref": "my-feature"}, tracks_main=True)
    assert branch.notes[0].startswith("'my-feature' is not a release the kit's version table")
    assert not any("version table" in n for n in _plan({"pytorch_ref": "main"},
                                                       tracks_main=True).notes)
    assert not any("version table" in n for n in _plan().notes)


def test_checkout_is_volatile_for_a_branch_or_tag_but_not_a_full_commit() -> None:
    for ref in ("main", "release/2.9", "v2.8.0"):
        steps = {s.name: s for s in _plan(settings={"pytorch_ref": ref}).steps}
        assert steps["checkout"].volatile is True, ref
        assert steps["checkout"].to_json()["volatile"] is True
        # The checkout and the tree-facts check are re-checked; Triton follows the chain.
        assert [s.name for s in steps.values() if s.volatile] == ["checkout", "tree-facts"]
    sha = "0123456789abcdef0123456789abcdef01234567"
    pinned = {s.name: s for s in _plan(settings={"pytorch_ref": sha}).steps}
    assert pinned["checkout"].volatile is False
    # A full commit cannot move, but its tree can be reset under the kit's stamps.
    assert pinned["tree-facts"].volatile is True


def test_volatile_flag_is_not_part_of_the_digest() -> None:
    import dataclasses

    checkout = {s.name: s for s in _plan().steps}["checkout"]
    assert checkout.digest() == dataclasses.replace(checkout, volatile=False).digest()


def test_triton_env_carries_the_kits_compilers_and_hip_settings() -> None:
    env = {**ENV, "CC": "/usr/bin/gcc-12", "CXX": "/usr/bin/g++-12", "HIP_PATH": "/opt/rocm",
           "HIP_CLANG_PATH": "/usr/lib/llvm-22/bin", "ROCM_PATH": "/opt/rocm",
           "PYTORCH_ROCM_ARCH": "gfx1100", "USE_ROCM": "1"}
    plan = plan_build(SETTINGS, FACTS, ("gfx1100",), workdir=WORK, env=env, compilers=CC)
    triton = {s.name: s for s in plan.steps}["triton"]
    assert triton.env == {"CC": "/usr/bin/gcc-12", "CXX": "/usr/bin/g++-12",
                          "HIP_PATH": "/opt/rocm", "HIP_CLANG_PATH": "/usr/lib/llvm-22/bin",
                          "ROCM_PATH": "/opt/rocm", "MAX_JOBS": "8",
                          "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.mark.parametrize("bad", ["abc", "", "4.5", "-2"])
def test_non_numeric_max_jobs_is_a_config_error_before_any_step(bad: str) -> None:
    from rocmforge.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        plan_build(SETTINGS, FACTS, ("gfx1100",), workdir=WORK, env={**ENV, "MAX_JOBS": bad},
                   compilers=CC)
    assert f"MAX_JOBS={bad!r} is not a whole number" in str(raised.value.paragraph())
    assert raised.value.exit_code == 2


def test_in_process_steps_say_what_they_will_do_in_the_plan_and_its_digest() -> None:
    """The plan is the build: a "python" step carries its effects (files, URLs, commands), and
    they are in `plan --json` and in the digest; a "run" step's argv says it all."""
    steps = {s.name: s for s in _plan().steps}
    triton = steps["triton"].to_json()["effects"]
    assert triton["fetches"] == ["https://i/rocm6.4", "the repository the pin names"]
    assert triton["writes"] == ["/w/downloads", "/w/src/triton"]
    assert triton["commands"] == [["/w/venv/bin/python", "-m", "pip", "install", "--no-deps",
                                   "--force-reinstall", "<the triton wheel>"]]
    assert steps["checkout"].to_json()["effects"]["fetches"] == [
        "https://github.com/pytorch/pytorch.git v2.8.0"]
    assert steps["compilers"].effects is not None
    assert steps["compilers"].effects.commands == (("/usr/bin/gcc-12", "--version"),
                                                   ("/usr/bin/g++-12", "--version"))
    assert steps["stale-check"].effects is not None
    assert steps["stale-check"].effects.notes == (
        "removes /w/src/pytorch/build when its PYTORCH_ROCM_ARCH is not gfx1100",)
    assert steps["venv"].effects is None and "effects" not in steps["venv"].to_json() or \
        steps["venv"].to_json()["effects"] is None
    # Another index changes what the triton step fetches, so its digest.
    other = {s.name: s for s in _plan({"triton_index": "https://mirror/rocm{rocm}"}).steps}
    assert other["triton"].to_json()["effects"]["fetches"][0] == "https://mirror/rocm6.4"
    assert other["triton"].digest() != steps["triton"].digest()
    # Wheel only: no source build is planned.
    wheel = {s.name: s for s in _plan({"triton_mode": "wheel"}).steps}
    assert wheel["triton"].to_json()["effects"]["fetches"] == ["https://i/rocm6.4"]


def test_steps_carry_lists_not_joined_strings() -> None:
    steps = {s.name: s for s in _plan(targets=("gfx1100", "gfx942")).steps}
    assert steps["stale-check"].inputs["targets"] == ("gfx1100", "gfx942")
    assert steps["collect"].to_json()["inputs"]["targets"] == ["gfx1100", "gfx942"]
