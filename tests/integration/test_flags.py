"""The one flag table (rocmforge.settings.FLAGS): every task's flags, short letters and help come
from it, `invoke --help` shows exactly it, and `plan --json` names each value's true source.

The help tests run the real `invoke --help TASK` in this checkout and parse its option list.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from invoke import Collection, Context

from rocmforge.settings import BUILD_FLAGS, FLAG_BY_NAME, FLAGS, Settings, flag_default
from rocmforge.tasks import ns
from rocmforge.tasks._flags import flagged

REPO = Path(__file__).resolve().parents[2]
# One option of Invoke's help: "  -a STRING, --arch=STRING   help ..." or "  --all   help ...".
_OPTION = re.compile(r"^  (?:-(\w)(?: \[?STRING\]?)?, )?--([\w-]+)(?:\[?=STRING\]?)?\s{2,}(.*)$")


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROCMFORGE_", "INVOKE_"))}
    env["PYTHONPATH"] = str(REPO)
    return env


def help_options(task: str) -> dict[str, tuple[str, str]]:
    """`invoke --help TASK` as {long name: (short letter or "", help with blanks squeezed out)}."""
    done = subprocess.run([sys.executable, "-m", "invoke", "--help", task], cwd=REPO,
                          env=clean_env(), capture_output=True, text=True, check=True)
    lines = done.stdout.split("Options:\n", 1)[1].splitlines()
    found: dict[str, tuple[str, list[str]]] = {}
    last = ""
    for line in lines:
        match = _OPTION.match(line)
        if match:
            last = match.group(2)
            found[last] = (match.group(1) or "", [match.group(3)])
        elif line.strip() and last:
            found[last][1].append(line.strip())
    return {name: (short, "".join(" ".join(parts).split())) for name, (short, parts) in
            found.items()}


def squeezed(text: str) -> str:
    return "".join(text.split())


def expected(names: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    return {FLAG_BY_NAME[n].long[2:]: (FLAG_BY_NAME[n].short, squeezed(FLAG_BY_NAME[n].help))
            for n in names}


def test_build_help_lists_exactly_the_table_flags() -> None:
    assert help_options("build") == expected((*BUILD_FLAGS, "verbose"))


def test_plan_help_lists_the_table_flags_and_json() -> None:
    shown = help_options("plan")
    json_flag = shown.pop("json")
    assert shown == expected(BUILD_FLAGS)
    assert json_flag == ("j", squeezed("print the plan as versioned JSON (rocmforge.plan/1)"))


# triton.pin's --ref is an option of its own (a ref to read over HTTP, not the build's ref).
OWN_HELP = {("triton.pin", "ref"): "read the pin of this PyTorch ref over HTTP (pin_url) instead "
            "of the checkout"}


@pytest.mark.parametrize("task", ["doctor", "env", "checkout", "toolchain", "triton.pin"])
def test_other_tasks_spell_the_shared_flags_the_same(task: str) -> None:
    shown = help_options(task)
    assert shown
    for long, (short, help_text) in shown.items():
        name = long.replace("-", "_")
        flag = FLAG_BY_NAME.get(name) or FLAG_BY_NAME[name + "_"]  # --with is `with_`
        assert short == flag.short, (task, long)
        if flag.setting:
            assert help_text == squeezed(OWN_HELP.get((task, flag.name), flag.help)), (task, long)


def all_tasks(collection: Collection, prefix: str = "") -> dict[str, object]:
    found: dict[str, object] = {prefix + name: t for name, t in collection.tasks.items()}
    for name, sub in collection.collections.items():
        found.update(all_tasks(sub, f"{prefix}{name}."))
    return found


def test_every_task_takes_long_and_short_flags_from_the_table() -> None:
    letters: dict[str, str] = {}
    tasks = all_tasks(ns)
    assert {"build", "plan", "doctor", "env", "checkout", "triton.pin", "triton.checkout",
            "toolchain", "inspect", "verify", "vendor", "install", "clean", "patch"} <= set(tasks)
    for task_name, task in tasks.items():
        for argument in task.get_arguments():  # type: ignore[attr-defined]
            flag = FLAG_BY_NAME[argument.name]
            shorts = [n for n in argument.names if len(n) == 1]
            assert shorts == ([flag.short] if flag.short else []), (task_name, argument.names)
            if flag.short:
                assert letters.setdefault(flag.short, flag.name) == flag.name
    # The cases: one letter each for --ref, --repo and --rocm-path, in every task.
    assert (FLAG_BY_NAME["ref"].short, FLAG_BY_NAME["repo"].short,
            FLAG_BY_NAME["rocm_path"].short) == ("r", "u", "o")


def test_the_table_has_one_name_and_one_letter_per_flag() -> None:
    names = [f.name for f in FLAGS]
    letters = [f.short for f in FLAGS if f.short]
    assert len(names) == len(set(names)) and len(letters) == len(set(letters))
    assert all(len(s) == 1 and s.islower() for s in letters)
    fields = {f.name for f in __import__("dataclasses").fields(Settings)}
    assert all(f.setting in fields for f in FLAGS if f.setting)


def test_generated_signature_gives_invoke_the_types() -> None:
    from rocmforge.tasks.build import build, plan

    params = inspect.signature(plan.body).parameters
    assert list(params) == ["c", "json", *BUILD_FLAGS]
    assert params["json"].default is False
    assert params["arch"].default == "" and params["skip_preflight"].default is False
    assert params["gcc"].default == ""  # text: resolve() checks it and answers exit 2
    assert flag_default(FLAG_BY_NAME["system_site_packages"]) is False
    kinds = {a.name: a.kind for a in build.get_arguments()}
    assert kinds["arch"] is str and kinds["allow_compiler"] is bool


def test_a_parameter_outside_the_table_is_refused_at_definition() -> None:
    def body(c: Context, bogus: str = "") -> None:
        """x"""

    with pytest.raises(ValueError, match=r"does not list: \['bogus'\]"):
        flagged()(body)
    with pytest.raises(ValueError, match="help of setting flags comes from the flag table"):
        flagged(("arch",), help={"arch": "other words"})
    with pytest.raises(ValueError, match="'json' is not a setting flag"):
        flagged(("json",))


# --- values and their sources through the real `invoke plan --json` -----------------------------


def plan_json(cwd: Path, *flags: str, env: dict[str, str] | None = None) -> dict[str, object]:
    cwd.joinpath("tasks.py").write_text("from rocmforge.tasks import ns\n")
    done = subprocess.run([sys.executable, "-m", "invoke", "plan", "--json", *flags], cwd=cwd,
                          env={**clean_env(), **(env or {})}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    settings: dict[str, object] = json.loads(done.stdout)["settings"]
    return settings


@pytest.mark.needs_tool("hipcc")  # plan finds a ROCm install: Debian's under /usr
def test_plan_json_names_each_value_true_source_without_invoke_yaml(tmp_path: Path) -> None:
    settings = plan_json(tmp_path, "-a", "gfx1100")
    origins = settings["origins"]
    assert isinstance(origins, dict)
    assert not any("invoke.yaml" in str(v) for v in origins.values()), origins
    assert origins["arch"] == "flag --arch"
    assert origins["pytorch_ref"] == "config/defaults.toml"
    assert set(origins.values()) == {"flag --arch", "config/defaults.toml"}


@pytest.mark.needs_tool("hipcc")
def test_plan_json_sources_of_every_layer(tmp_path: Path) -> None:
    tmp_path.joinpath("invoke.yaml").write_text("rocm:\n  max_jobs: 5\n  triton_mode: wheel\n")
    settings = plan_json(
        tmp_path, "-a", "gfx1100", "-r", "v2.8.0", "-u", "https://example.org/pytorch.git",
        env={"ROCMFORGE_TRITON_MODE": "source", "INVOKE_ROCM_CACHE": "none"})
    origins = settings["origins"]
    assert isinstance(origins, dict)
    assert (settings["pytorch_ref"], origins["pytorch_ref"]) == ("v2.8.0", "flag --ref")
    assert (settings["pytorch_repo"], origins["pytorch_repo"]) == (
        "https://example.org/pytorch.git", "flag --repo")
    assert origins["max_jobs"] == f"{tmp_path / 'invoke.yaml'} (rocm:)"
    # ROCMFORGE_* beats invoke.yaml; a flag beats both.
    assert (settings["triton_mode"], origins["triton_mode"]) == (
        "source", "env ROCMFORGE_TRITON_MODE")
    assert origins["cache"] == "env INVOKE_ROCM_CACHE"
    flagged_mode = plan_json(tmp_path, "-a", "gfx1100", "-t", "skip",
                             env={"ROCMFORGE_TRITON_MODE": "source"})
    assert (flagged_mode["triton_mode"], flagged_mode["origins"]["triton_mode"]) == (  # type: ignore[index]
        "skip", "flag --triton")


@pytest.mark.needs_tool("hipcc")
def test_a_setting_missing_from_config_is_a_default(tmp_path: Path) -> None:
    import shutil

    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    defaults = config / "defaults.toml"
    defaults.write_text(defaults.read_text().replace("max_jobs = 0\n", ""))
    settings = plan_json(tmp_path, "-a", "gfx1100", env={"ROCMFORGE_CONFIG_DIR": str(config)})
    origins = settings["origins"]
    assert isinstance(origins, dict)
    assert origins["max_jobs"] == "default"
    assert origins["pytorch_ref"] == str(defaults)


def test_doctor_env_and_checkout_take_the_flags_their_verdicts_depend_on(tmp_path: Path) -> None:
    """Issue 32 item 6: doctor's own row names --allow-compiler, its verdict depends on the ref
    and the compilers, and -w/--work-dir was missing from doctor, env and checkout."""
    names = {task: {a.names[0].replace("-", "_") for a in ns.tasks[task].get_arguments()}
             for task in ("doctor", "env", "checkout")}
    assert {"allow_compiler", "ref", "work_dir", "gcc", "clang"} <= names["doctor"]
    assert {"allow_compiler", "ref", "work_dir"} <= names["env"]
    assert "work_dir" in names["checkout"]
    work = tmp_path / "w"
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx90a",
                           "--allow-compiler", "--gcc", "12", "--ref", "v2.9.1", "--work-dir",
                           str(work), "--json"], cwd=Path(__file__).resolve().parents[2],
                          env={**clean_env(), "HIP_PLATFORM": "amd"}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["rows"]
    assert not work.exists()  # doctor reads; it makes no work dir


def test_patch_and_triton_pin_read_the_work_dir_they_are_given(tmp_path: Path) -> None:
    """Issue 32 item 6: -w/--work-dir was missing from patch and triton.pin; they read the
    checkout of the work dir named (here one without a checkout: each says so, exit 2)."""
    root = Path(__file__).resolve().parents[2]
    for task in ("patch", "triton.pin"):
        done = subprocess.run([sys.executable, "-m", "invoke", task, "-w", str(tmp_path / "w")],
                              cwd=root, env=clean_env(), capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2, (task, done.stderr)
        assert str(tmp_path / "w") in done.stderr, (task, done.stderr)
        assert "Traceback" not in done.stderr


def test_doctor_offers_an_older_ref_only_when_one_exists() -> None:
    """Issue 32 item 5: on ROCm 5.2 doctor suggested an older PyTorch whose range has 5.2, but
    no release in the table has one (and `--ref v1.13.1` is refused)."""
    from rocmforge.plan.doctor import _releases_with_rocm

    assert _releases_with_rocm("5.2") == []
    newer = _releases_with_rocm("6.4")
    assert newer and all(isinstance(v, str) for v in newer)
    done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx90a",
                           "--json"], cwd=Path(__file__).resolve().parents[2],
                          env={**clean_env(), "HIP_PLATFORM": "amd"}, capture_output=True,
                          text=True, timeout=300)
    row = next(r for r in json.loads(done.stdout)["rows"] if r["check"] == "ROCm for PyTorch")
    assert row["status"] == "FAIL"
    assert "--ref" not in row["fix"].split("(no PyTorch release")[0]
    assert "no PyTorch release in config/pytorch.toml ships wheels for ROCm 5.2" in row["fix"]


def test_the_target_rows_advise_the_same_rocm_as_the_pytorch_row() -> None:
    """Issue 32 item 5: doctor said "install ROCm 6.4" in one row and "install ROCm >= 6.0
    (LLVM >= 15)" in another. The target rows now name the newest ROCm the PyTorch being built
    ships wheels for that has the target, and say when no such ROCm exists."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.releases import pytorch_release_for
    from rocmforge.plan.doctor import _toolchain_fix
    from rocmforge.probes.rocm import RocmInstall

    debian = RocmInstall(root=Path("/usr"), version="5.2", source="distro /usr")
    table = load_arch_table()
    fix = _toolchain_fix("gfx1100", debian, table, pytorch_release_for("v2.9.1"))
    assert fix.startswith("install ROCm 6.4 (the newest PyTorch 2.9.1 ships wheels for; gfx1100 "
                          "needs ROCm >= 6.0, LLVM >= 15) from https://")
    # gfx1200 first appears in ROCm 6.4.1: 2.8's ROCm 6.3/6.4 rows are below it.
    old = _toolchain_fix("gfx1200", debian, table, pytorch_release_for("v2.7.1"))
    assert old.startswith("install ROCm >= 6.4.1, LLVM >= 18; PyTorch 2.7.1 ships wheels only "
                          "for ROCm 6.2.4, 6.3, so build a newer PyTorch too (--ref) from")


def test_the_default_work_dir_belongs_to_the_project_not_the_subfolder(tmp_path: Path) -> None:
    """Issue 32 item 8: from a subfolder of the checkout Invoke finds tasks.py above, and the
    kit made a second .rocmforge in the subfolder."""
    from rocmforge.settings import Settings
    from rocmforge.tasks._common import anchored_work_dir

    project = tmp_path / "proj"
    (project / "sub" / "deeper").mkdir(parents=True)
    (project / "tasks.py").write_text("")
    chosen = anchored_work_dir(Settings(origins={"work_dir": "config/defaults.toml"}),
                               cwd=project / "sub" / "deeper")
    assert chosen.work_dir == str(project / ".rocmforge")
    named = Settings(work_dir="mine", origins={"work_dir": "flag --work-dir"})
    assert anchored_work_dir(named, cwd=project / "sub").work_dir == "mine"
    root = Path(__file__).resolve().parents[2]
    plans = [json.loads(subprocess.run(
        [sys.executable, "-m", "invoke", "plan", "--arch", "gfx1100", "--json"], cwd=where,
        env={**clean_env(), "HIP_PLATFORM": "amd"}, capture_output=True, text=True,
        timeout=300).stdout)["settings"]["work_dir"] for where in (root, root / "docs")]
    assert Path(plans[1]).resolve() == (root / ".rocmforge").resolve()
    assert Path(plans[0]).absolute().resolve() == Path(plans[1]).resolve()
    assert not (root / "docs" / ".rocmforge").exists()


def test_verify_help_lists_every_check_it_takes() -> None:
    """Issue 32 item 9: `verify --help` listed --only choices without triton_targets and
    companions; the list now comes from verify's own CHECK_NAMES."""
    from rocmforge.verify.model import CHECK_NAMES

    shown = subprocess.run([sys.executable, "-m", "invoke", "verify", "--help"],
                           cwd=Path(__file__).resolve().parents[2], env=clean_env(),
                           capture_output=True, text=True, timeout=120).stdout
    listed = "".join(shown.split("--only=STRING", 1)[1].split("-d STRING")[0].split())
    assert listed == f"comma-separatedchecks:{','.join(CHECK_NAMES)}"
    assert {"triton_targets", "companions"} <= set(CHECK_NAMES)
