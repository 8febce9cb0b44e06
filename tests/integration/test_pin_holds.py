"""The torch pin holds whatever pip configuration the user has (issue 39 item 4), with REAL pip
(the venv's own, from ensurepip) and local wheels: `pip install --dry-run torch==1.0` against a
local folder is refused by pip's resolver under every setting that voided the pin before
(PIP_CONSTRAINT, PIP_CONFIG_FILE, a user-level `[install] constraint`), the user's own
constraint still applies (six==1.0 in their file refuses six==2.0), the venv's pip.conf keeps
its comments and is put back as it was, and a pip.conf pip cannot parse is one paragraph, exit 2,
nothing written. HOME and XDG_CONFIG_DIRS point into the test's folder: the machine's own
/etc/xdg/pip/pip.conf is not read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from buildhelpers import make_wheel

from rocmforge.errors import UsageError
from rocmforge.probes.pip_pin import effective_pin, site_packages
from rocmforge.sources.constraints import (
    CONSTRAINTS_NAME,
    HOOK_PTH,
    MARK,
    protect_venv,
    release_venv,
)

MINE = "six==1.0\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pin")
    built = make_wheel(base / "dist", "torch", "2.9.1", {"torch/__init__.py": ""})
    make_wheel(base / "index", "torch", "1.0", {"torch/__init__.py": ""})
    make_wheel(base / "index", "six", "2.0", {"six.py": ""})
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True, timeout=300)
    subprocess.run([str(base / "venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                    "--no-deps", "--no-index", str(built)], check=True, timeout=300,
                   env=_env(base))
    (base / "mine.txt").write_text(MINE)
    return base


def _env(base: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "XDG_"))}
    env.update(HOME=str(base / "home"), XDG_CONFIG_DIRS=str(base / "etc-xdg"),
               XDG_CONFIG_HOME=str(base / "home" / ".config"), PIP_NO_INPUT="1", **extra)
    return env


def _pin(base: Path, user_conf: str = "", venv_conf: str = "") -> Path:
    """The venv pinned to the built torch, the user's ~/.config/pip/pip.conf holding
    `user_conf` (none when empty) and the venv's pip.conf `venv_conf` before the pin."""
    venv = base / "venv"
    release_venv(venv)
    user = base / "home" / ".config" / "pip" / "pip.conf"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.unlink(missing_ok=True)
    if user_conf:
        user.write_text(user_conf)
    (venv / "pip.conf").unlink(missing_ok=True)
    if venv_conf:
        (venv / "pip.conf").write_text(venv_conf)
    assert protect_venv(venv, ["torch-2.9.1-py3-none-any.whl"], _env(base)) == \
        venv / CONSTRAINTS_NAME
    return venv


def _pip_refuses(base: Path, want: str, *flags: str, **env: str) -> bool:
    done = subprocess.run([str(base / "venv" / "bin" / "python"), "-m", "pip", "install",
                           "--dry-run", "--no-index", "--find-links", str(base / "index"),
                           *flags, want], env=_env(base, **env), capture_output=True,
                          text=True, timeout=300)
    if done.returncode == 0:
        assert f"Would install {want.replace('==', '-')}" in done.stdout, done.stdout
        return False
    assert "conflict" in (done.stdout + done.stderr).lower(), done.stdout + done.stderr
    return True


@pytest.mark.parametrize(("case", "user_conf", "env"), [
    ("nothing set", "", {}),
    ("PIP_CONSTRAINT", "", {"PIP_CONSTRAINT": "{mine}"}),
    ("PIP_CONFIG_FILE [install]", "", {"PIP_CONFIG_FILE": "{envconf_install}"}),
    ("PIP_CONFIG_FILE [global]", "", {"PIP_CONFIG_FILE": "{envconf_global}"}),
    ("user [install] constraint", "[install]\nconstraint = {mine}\n", {}),
    ("user [global] constraint", "[global]\nconstraint = {mine}\n", {}),
    ("PIP_CONFIG_FILE /dev/null", "", {"PIP_CONFIG_FILE": os.devnull}),
])
def test_the_pin_holds_and_the_users_constraint_stays(base: Path, case: str, user_conf: str,
                                                      env: dict[str, str]) -> None:
    names = {"mine": str(base / "mine.txt"),
             "envconf_install": str(base / "env-install.conf"),
             "envconf_global": str(base / "env-global.conf")}
    (base / "env-install.conf").write_text(f"[install]\nconstraint = {names['mine']}\n")
    (base / "env-global.conf").write_text(f"[global]\nconstraint = {names['mine']}\n")
    venv = _pin(base, user_conf.format(**names))
    env = {k: v.format(**names) for k, v in env.items()}
    assert _pip_refuses(base, "torch==1.0", **env), case
    # The user's own constraint applies inside the venv too (no setting of theirs: six is free;
    # PIP_CONFIG_FILE=/dev/null makes pip read no file, the user's included).
    theirs = case not in ("nothing set", "PIP_CONFIG_FILE /dev/null")
    assert _pip_refuses(base, "six==2.0", **env) == theirs, case
    state = effective_pin(venv, _env(base, **env))
    assert state.holds and str(venv / CONSTRAINTS_NAME) in state.constraints
    assert (names["mine"] in state.constraints) == theirs


def test_a_constraint_on_the_command_line_keeps_the_pin(base: Path) -> None:
    _pin(base)
    assert _pip_refuses(base, "torch==1.0", "-c", str(base / "mine.txt"))
    assert _pip_refuses(base, "six==2.0", "-c", str(base / "mine.txt"))


def test_before_the_fix_these_settings_voided_the_pin(base: Path) -> None:
    """What the kit wrote before (a [global] constraint in the venv's pip.conf, no hook): pip
    itself installs torch==1.0 under PIP_CONSTRAINT and a user-level [install] constraint."""
    venv = _pin(base)
    site = site_packages(venv)
    assert site is not None
    (site / HOOK_PTH).unlink()
    (venv / "pip.conf").write_text(f"[global]\nconstraint = {venv / CONSTRAINTS_NAME}\n")
    mine = str(base / "mine.txt")
    assert _pip_refuses(base, "torch==1.0")
    assert not _pip_refuses(base, "torch==1.0", PIP_CONSTRAINT=mine)
    user = base / "home" / ".config" / "pip" / "pip.conf"
    user.write_text(f"[install]\nconstraint = {mine}\n")
    assert not _pip_refuses(base, "torch==1.0")
    user.unlink()
    # The next pin takes the old kit's [global] line out and writes its own.
    protect_venv(venv, ["torch-2.9.1-py3-none-any.whl"], _env(base))
    assert (venv / "pip.conf").read_text() == (
        f"[global]\n[install]\n{MARK}\nconstraint = {venv / CONSTRAINTS_NAME}\n")
    assert _pip_refuses(base, "torch==1.0", PIP_CONSTRAINT=mine)


def test_comments_stay_and_release_puts_the_file_back(base: Path) -> None:
    mine = str(base / "mine.txt")
    original = ("# my venv settings\n[global]\ntimeout = 30  \n\n[install]\n; why: a cap\n"
                f"constraint = {mine}\n    {base / 'more.txt'}\nno-cache-dir = true\n")
    (base / "more.txt").write_text("")
    venv = _pin(base, venv_conf=original)
    ours = venv / CONSTRAINTS_NAME
    assert (venv / "pip.conf").read_text() == (
        "# my venv settings\n[global]\ntimeout = 30  \n\n[install]\n; why: a cap\n"
        f"{MARK}\n# rocmforge was: constraint = {mine}\n"
        f"# rocmforge was:     {base / 'more.txt'}\n"
        f"constraint = {mine} {base / 'more.txt'} {ours}\nno-cache-dir = true\n")
    assert _pip_refuses(base, "torch==1.0") and _pip_refuses(base, "six==2.0")
    # Pinned again (a new build): one block, not two.
    protect_venv(venv, ["torch-2.9.1-py3-none-any.whl"], _env(base))
    assert (venv / "pip.conf").read_text().count(MARK) == 1
    assert release_venv(venv)
    assert (venv / "pip.conf").read_text() == original
    site = site_packages(venv)
    assert site is not None and not (site / HOOK_PTH).exists()
    assert not _pip_refuses(base, "torch==1.0", PIP_CONSTRAINT=mine)  # lifted: free again


@pytest.mark.parametrize("bad", ["[global\ntimeout = 3\n", "[install]\nconstraint = a\n"
                                 "constraint = b\n", "constraint = a\n"])
def test_an_unparseable_pip_conf_is_one_paragraph_and_nothing_written(base: Path,
                                                                      bad: str) -> None:
    venv = base / "venv"
    release_venv(venv)
    (venv / "pip.conf").write_text(bad)
    (venv / CONSTRAINTS_NAME).unlink(missing_ok=True)
    with pytest.raises(UsageError) as refused:
        protect_venv(venv, ["torch-2.9.1-py3-none-any.whl"], _env(base))
    assert refused.value.exit_code == 2
    assert refused.value.what.startswith(f"{venv / 'pip.conf'} is not a pip configuration "
                                         "file pip can read (")
    assert "\n" not in refused.value.paragraph()
    assert (venv / "pip.conf").read_text() == bad and not (venv / CONSTRAINTS_NAME).exists()
    # pip itself stops on it too (what the paragraph says).
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "config", "list"],
                          env=_env(base), capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    (venv / "pip.conf").unlink()


def test_doctor_says_when_the_pin_is_voided_or_torch_was_replaced(base: Path) -> None:
    """doctor's rows (plan.hazard_rows.pin_rows) from the real venv: OK while pip reads the
    pin; WARN when the hook is gone and PIP_CONSTRAINT replaces it; WARN "venv torch" when real
    pip replaced the built torch with another version, and when it put the same version back
    from an index (no PEP 610 direct_url.json naming a wheel file)."""
    from rocmforge.plan.hazard_rows import pin_rows
    from rocmforge.probes.hazards import Hazards, probe_pins

    venv = _pin(base)
    state_dir = base / "state"
    rows = pin_rows(Hazards(pins=probe_pins(venv, state_dir, _env(base))))
    assert [(r.check, r.status) for r in rows] == [("venv pin", "OK")]
    assert rows[0].detail == (f"`pip install` in {venv} keeps torch==2.9.1: pip takes its "
                              f"constraint from {venv / 'pip.conf'} [install]")
    # A constraint the user adds to their own pip.conf after the pin: the kit's line (a copy
    # taken at pin time) replaces it in the venv, and doctor says so.
    mine = str(base / "mine.txt")
    user = base / "home" / ".config" / "pip" / "pip.conf"
    user.write_text(f"[global]\nconstraint = {mine}\n")
    assert not _pip_refuses(base, "six==2.0")
    rows = pin_rows(Hazards(pins=probe_pins(venv, state_dir, _env(base))))
    assert [(r.check, r.status) for r in rows] == [("venv pin", "WARN")]
    assert rows[0].detail == (f"`pip install` in {venv} keeps torch==2.9.1, but not your "
                              f"constraint file(s) {mine}: your pip configuration named them "
                              "after the kit wrote the venv's line, which replaces them there")
    _pin(base, f"[global]\nconstraint = {mine}\n")  # what the fix does: the line again
    assert _pip_refuses(base, "six==2.0")
    rows = pin_rows(Hazards(pins=probe_pins(venv, state_dir, _env(base))))
    assert [(r.check, r.status) for r in rows] == [("venv pin", "OK")]
    user.unlink()
    site = site_packages(venv)
    assert site is not None
    (site / HOOK_PTH).unlink()
    rows = pin_rows(Hazards(pins=probe_pins(venv, state_dir, _env(base, PIP_CONSTRAINT=mine))))
    assert [(r.check, r.status) for r in rows] == [("venv pin", "WARN")]
    assert rows[0].detail == (f"`pip install` in {venv} can replace torch==2.9.1: in this "
                              f"shell pip takes its constraint from PIP_CONSTRAINT ({mine}), "
                              "which does not name the kit's file")
    assert not _pip_refuses(base, "torch==1.0", PIP_CONSTRAINT=mine)  # what the row says
    python = str(venv / "bin" / "python")
    # Real pip replaces the built torch, with the pin lifted the way a user could.
    for folder, want in (("index", "torch==1.0"), ("same", "torch==2.9.1")):
        if folder == "same":
            make_wheel(base / "same", "torch", "2.9.1", {"torch/__init__.py": "# PyPI's"})
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                        "--no-index", "--find-links", str(base / folder), want],
                       env=_env(base, PIP_CONFIG_FILE=str(venv / "rocmforge-unpinned.conf")),
                       check=True, timeout=300)
        rows = pin_rows(Hazards(pins=probe_pins(venv, state_dir, _env(base))))
        torch_row = [r for r in rows if r.check == "venv torch"]
        assert len(torch_row) == 1 and torch_row[0].status == "WARN"
        assert torch_row[0].detail.startswith(
            f"{venv}: torch 1.0 is installed, the pin says 2.9.1" if folder == "index" else
            f"{venv}: torch 2.9.1 was installed from an index, not from a wheel file of the "
            "kit's dist/")
        assert torch_row[0].fix.startswith(f"invoke install --python {python}")


REPO_ROOT = Path(__file__).resolve().parents[2]


def _invoke(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)


def test_invoke_install_with_an_unparseable_pip_conf_is_exit_2(tmp_path: Path) -> None:
    from conftest import put_wheels

    from rocmforge.knowledge.manifest import build_manifest, write_manifest

    root = tmp_path / "w"
    doc = build_manifest(targets=["gfx1100"], wheels={"torch": "torch-2.9.1-py3-none-any.whl",
                                                      "triton": ""},
                         lock=None, toolchain={}, env={}, steps=[], plan_settings={},
                         created="t")
    put_wheels(root / "dist", doc, ["torch-2.9.1-py3-none-any.whl"])
    write_manifest(root / "dist" / "manifest.json", doc)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True, timeout=300)
    (root / "venv" / "pip.conf").write_text("[global\ntimeout = 3\n")
    done = _invoke("install", "--work-dir", str(root))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"rocmforge: {root / 'venv' / 'pip.conf'} is not a pip "
                                  "configuration file pip can read (File contains no section "
                                  "headers.")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    # Refused before the pip command is shown: nothing on stdout looks as if pip ran.
    assert done.stdout == ""
    assert (root / "venv" / "pip.conf").read_text() == "[global\ntimeout = 3\n"
    assert not (root / "venv" / CONSTRAINTS_NAME).exists()


def test_the_plan_shows_the_pin_as_an_effect(tmp_path: Path) -> None:
    import json

    work = tmp_path / "w"
    done = _invoke("plan", "--json", "--arch", "gfx1100", "--work-dir", str(work))
    assert done.returncode == 0, done.stderr
    steps = {s["name"]: s for s in json.loads(done.stdout)["steps"]}
    effects = steps["install"]["effects"]
    venv = work / "venv"
    assert effects["writes"] == [
        str(venv / "pip.conf"), str(venv / CONSTRAINTS_NAME),
        str(venv / "rocmforge-unpinned.conf"),
        str(venv / "lib" / "python*" / "site-packages" / HOOK_PTH),
        str(venv / "lib" / "python*" / "site-packages" / "_rocmforge_pin.py")]
    assert effects["notes"][1].startswith(f"pins {venv}: {venv / 'pip.conf'} [install] "
                                          "constraint names your own constraint files, then "
                                          f"{venv / CONSTRAINTS_NAME}")


def test_doctor_reads_every_venv_invoke_install_pinned(base: Path) -> None:
    from rocmforge.probes.hazards import probe_pins
    from rocmforge.sources.constraints import record_pinned

    venv = _pin(base)
    state_dir = base / "state-list"
    assert probe_pins(None, state_dir, _env(base)) == ()
    record_pinned(state_dir, venv)
    record_pinned(state_dir, venv)
    assert (state_dir / "pinned-venvs.txt").read_text() == f"{venv}\n"
    assert [r.prefix for r in probe_pins(None, state_dir, _env(base))] == [venv]


def test_the_pip_script_is_held_as_python_m_pip_is(base: Path) -> None:
    """`venv/bin/pip install` (the console script, not `python -m pip`) under PIP_CONSTRAINT."""
    _pin(base)
    mine = str(base / "mine.txt")
    done = subprocess.run([str(base / "venv" / "bin" / "pip"), "install", "--dry-run",
                           "--no-index", "--find-links", str(base / "index"), "torch==1.0"],
                          env=_env(base, PIP_CONSTRAINT=mine), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0 and "conflict" in (done.stdout + done.stderr).lower()


def test_invoke_install_pins_a_venv_whose_path_has_a_space(tmp_path: Path) -> None:
    """Defect 7 of the user review: a venv under "my venv" was left unpinned (exit 0, a note).
    The kit names its constraint file there by its file: URL (%20 for the space), which real
    pip reads: the venv's own pip (ensurepip's 23.2.1) and this machine's pip 26.3 (run with
    --python into that venv) both refuse `pip install torch==1.0` afterwards, under
    PIP_CONSTRAINT too (the hook adds the URL), and accept the built version."""
    from rocmforge.knowledge.manifest import build_manifest, file_record, write_manifest

    root = tmp_path / "w"
    built = make_wheel(root / "dist", "torch", "2.9.1", {"torch/__init__.py": ""})
    make_wheel(tmp_path / "index", "torch", "1.0", {"torch/__init__.py": ""})
    doc = build_manifest(targets=["gfx1100"], wheels={"torch": built.name, "triton": ""},
                         lock=None, toolchain={}, env={}, steps=[], plan_settings={},
                         created="t")
    doc["files"] = {built.name: file_record(built)}
    write_manifest(root / "dist" / "manifest.json", doc)
    venv = tmp_path / "fx" / "my venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    env = _env(tmp_path)
    done = subprocess.run([sys.executable, "-m", "invoke", "install", "--work-dir", str(root),
                           "--python", python], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    constraints = venv / CONSTRAINTS_NAME
    assert f"pinned {venv} to these wheels ({constraints})" in done.stdout
    assert "not pinned" not in done.stdout + done.stderr
    url = constraints.as_uri()
    assert "%20" in url and " " not in url
    assert f"constraint = {url}\n" in (venv / "pip.conf").read_text()
    assert effective_pin(venv, env).holds
    host_pip = [sys.executable, "-m", "pip", "--python", python]
    # (The hook that keeps the pin under PIP_CONSTRAINT acts in `python -m pip` of the venv;
    # pip --python runs pip from another file, which it does not recognise: not tried here.)
    for pip, extra in (([python, "-m", "pip"], {}), (host_pip, {}),
                       ([python, "-m", "pip"], {"PIP_CONSTRAINT": str(tmp_path / "none.txt")})):
        (tmp_path / "none.txt").write_text("")
        refused = subprocess.run([*pip, "install", "--dry-run", "--no-index", "--find-links",
                                  str(tmp_path / "index"), "torch==1.0"],
                                 env={**env, **extra}, capture_output=True, text=True,
                                 timeout=300)
        assert refused.returncode == 1, (pip, extra, refused.stdout + refused.stderr)
        assert "The user requested (constraint) torch==2.9.1" in refused.stdout, \
            refused.stdout + refused.stderr
    accepted = subprocess.run([*host_pip, "install", "--dry-run", "--no-index", "--no-deps",
                               str(built)], env=env, capture_output=True, text=True,
                              timeout=300)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert subprocess.run([*host_pip, "--version"], capture_output=True, text=True,
                          timeout=120).stdout.startswith("pip 26.")
