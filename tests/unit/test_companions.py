"""Companions (issue 19): the pairing table, `--with` parsing, the choice per torch version, the
planned steps, the list setting and the manifest's companions section. Pure: no subprocess."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from packaging.specifiers import SpecifierSet

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.companions import (
    CompanionRequest,
    choose,
    load_companions,
    pairing,
    parse_requests,
    version_of_ref,
)
from rocmforge.knowledge.manifest import read_manifest
from rocmforge.plan.build_plan import BuildOptions, plan_build
from rocmforge.settings import FLAG_BY_NAME, resolve
from rocmforge.workdir import workdir_for

TABLE = load_companions()
VISION, AUDIO = TABLE.get("torchvision"), TABLE.get("torchaudio")


@pytest.mark.parametrize(("torch", "vision"), [("2.4", "0.19"), ("2.8", "0.23"), ("2.9", "0.24"),
                                                ("2.11", "0.26"), ("2.13", "0.28"),
                                                ("2.14", "0.29")])
def test_torchvision_rows_follow_the_upstream_table(torch: str, vision: str) -> None:
    release = VISION.release_for_torch(torch)
    assert release is not None and (release.line, release.torch) == (vision, torch)
    assert release.requires == SpecifierSet(f"=={torch}.*") and not release.from_rule


def test_torchvision_beyond_the_table_uses_the_offset_rule_and_says_so() -> None:
    release = VISION.release_for_torch("2.15")
    assert release is not None and (release.line, release.from_rule) == ("0.30", True)
    assert release.requires == SpecifierSet("==2.15.*")
    assert pairing(VISION, "0.30.0a0", "2.15.0").source.endswith("rule for lines newer than "
                                                                  "the table")
    assert VISION.release_for_torch("2.3") is None  # older than the kit's rows: no guess


def test_torchaudio_ends_at_2_11_which_accepts_every_later_torch() -> None:
    assert AUDIO.release_for_torch("2.10").requires == SpecifierSet("==2.10.*")  # type: ignore[union-attr]
    last = AUDIO.release_for_torch("2.11")
    assert last is not None and last.requires == SpecifierSet(">=2.11")
    assert AUDIO.release_for_torch("2.12") is None and AUDIO.release_for_torch("2.13") is None
    assert pairing(AUDIO, "2.11.0", "2.13.0").matches
    assert not pairing(AUDIO, "2.10.0", "2.11.0").matches


@pytest.mark.parametrize(("ref", "version"), [("v0.28.0", "0.28.0"), ("0.24.1", "0.24.1"),
                                              ("v2.11.0-rc2", "2.11.0"),
                                              ("refs/tags/v0.23.0", "0.23.0"),
                                              ("release/0.24", "0.24"), ("main", ""),
                                              ("a" * 40, ""), ("next", "")])
def test_version_of_ref(ref: str, version: str) -> None:
    assert version_of_ref(ref) == version


def test_default_refs_pair_patch_releases_and_main() -> None:
    vision = choose(CompanionRequest(name="torchvision"), VISION, "2.9.1")
    assert (vision.ref, vision.version, vision.requires, vision.origin) == (
        "v0.24.1", "0.24.1", "==2.9.*", "table")
    audio = choose(CompanionRequest(name="torchaudio"), AUDIO, "2.8.0a0")
    assert (audio.ref, audio.version, audio.skipped) == ("v2.8.0", "2.8.0", "")
    assert vision.repo == "https://github.com/pytorch/vision.git"
    assert dict(vision.build_env) == {"FORCE_CUDA": "1"}
    assert dict(audio.build_env) == {"USE_ROCM": "1", "USE_CUDA": "0"}
    main = choose(CompanionRequest(name="torchvision"), VISION, "", repo="file:///m/vision")
    assert (main.ref, main.origin, main.repo, main.version) == ("main", "main",
                                                                "file:///m/vision", "")


def test_torchaudio_for_torch_2_13_is_skipped_with_the_reason_unless_a_ref_is_given() -> None:
    skipped = choose(CompanionRequest(name="torchaudio"), AUDIO, "2.13.0")
    assert skipped.ref == "" and skipped.skipped.startswith(
        "no torchaudio release for torch 2.13: torchaudio is in maintenance mode")
    assert "pass --with torchaudio@v2.11.0" in skipped.skipped
    given = choose(CompanionRequest(name="torchaudio", ref="v2.11.0"), AUDIO, "2.13.0")
    assert (given.ref, given.skipped, given.requires, given.origin) == ("v2.11.0", "", ">=2.11",
                                                                       "ref")


def test_a_mismatched_tag_is_refused_naming_both_versions() -> None:
    with pytest.raises(UsageError) as caught:
        choose(CompanionRequest(name="torchvision", ref="v0.28.0"), VISION, "2.9.1")
    assert caught.value.exit_code == 2
    assert caught.value.what == ("torchvision 0.28.0 (the ref v0.28.0) needs torch ==2.13.*, "
                                 "but this build makes torch 2.9.1")
    # A branch names no version: the pairing step checks it once checked out.
    branch = choose(CompanionRequest(name="torchvision", ref="feature"), VISION, "2.9.1")
    assert (branch.version, branch.requires) == ("", "")


def test_unknown_line_cannot_be_checked_and_is_refused() -> None:
    found = pairing(AUDIO, "2.12.0a0", "2.13.0")
    assert not found.known and not found.matches
    assert "no release line that config/companions.toml knows" in found.refusal("x").what


def test_parse_requests_names_refs_and_errors() -> None:
    assert parse_requests(["torchvision,torchaudio@v2.11.0"], TABLE) == (
        CompanionRequest(name="torchvision"), CompanionRequest(name="torchaudio", ref="v2.11.0"))
    with pytest.raises(UsageError, match='Did you mean "torchaudio"'):
        parse_requests(["torchaudo"], TABLE)
    with pytest.raises(UsageError, match="named twice"):
        parse_requests(["torchvision", "torchvision@v0.23.0"], TABLE)
    with pytest.raises(UsageError, match="has an '@' but no ref"):
        parse_requests(["torchvision@"], TABLE)


def test_loader_refuses_unknown_keys_and_bad_specifiers(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "config" / "companions.toml").read_text()
    (tmp_path / "companions.toml").write_text(text.replace("main_ref = \"main\"\nbuild_env = "
                                                           "{ FORCE_CUDA",
                                                           "main_rev = \"main\"\nbuild_env = "
                                                           "{ FORCE_CUDA", 1))
    with pytest.raises(ConfigError, match='Unknown key "main_rev"'):
        load_companions(tmp_path)
    (tmp_path / "companions.toml").write_text(text.replace('requires = ">=2.11"',
                                                           'requires = "at least 2.11"'))
    with pytest.raises(ConfigError, match="is not a PEP 440 specifier"):
        load_companions(tmp_path)


# ---------------------------------------------------------------------------- settings, flags


def test_with_flag_sets_the_companions_list_setting() -> None:
    flag = FLAG_BY_NAME["with_"]
    assert (flag.long, flag.short, flag.setting) == ("--with", "", "companions")
    settings = resolve(defaults={}, environ={"ROCMFORGE_COMPANION_REPOS": "torchvision=file:///v"},
                       flags={"companions": "torchvision, torchaudio@v2.11.0"})
    assert settings.companions == ("torchvision", "torchaudio@v2.11.0")
    assert settings.companion_repos == {"torchvision": "file:///v"}
    assert settings.origins["companions"] == "flag --with"
    from_toml = resolve(defaults={"companions": ["torchvision"]}, environ={})
    assert from_toml.companions == ("torchvision",)
    with pytest.raises(UsageError, match="a list of names"):
        resolve(defaults={"companions": [1]}, environ={})


# ---------------------------------------------------------------------------------- the plan

WORK = workdir_for("/w")
SETTINGS = dict(pytorch_repo="https://github.com/pytorch/pytorch.git", pytorch_ref="v2.8.0",
                mirrors={}, triton_index="https://i/rocm{rocm}", triton_repo="", origins={},
                triton_mode="skip", skip_preflight=True, venv_system_site_packages=False,
                companion_repos={})
FACTS = SimpleNamespace(rocm=SimpleNamespace(root=Path("/opt/rocm"), version="6.4.1"))
ENV = {"PYTORCH_ROCM_ARCH": "gfx1100", "USE_CUDA": "0", "MAX_JOBS": "8",
       "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _plan(companions: tuple[str, ...], version: str = "2.8.0", **more: object):
    settings = SimpleNamespace(**{**SETTINGS, "companions": companions, **more})
    return plan_build(settings, FACTS, ("gfx1100",), workdir=WORK, env=ENV,  # type: ignore[arg-type]
                      compilers={"cc": "gcc", "cxx": "g++"},
                      options=BuildOptions(pytorch_version=version, tracks_main=not version))


def test_companion_steps_come_after_torchs_install_in_order() -> None:
    plan = _plan(("torchvision", "torchaudio"))
    names = [s.name for s in plan.steps]
    assert names[names.index("install"):] == [
        "install", "torchvision-checkout", "torchvision-pairing", "torchvision-patches",
        "torchvision-build", "torchaudio-checkout", "torchaudio-pairing", "torchaudio-patches",
        "torchaudio-build", "companions-collect", "companions-install"]
    steps = {s.name: s for s in plan.steps}
    build = steps["torchvision-build"]
    assert build.argv == ("/w/venv/bin/python", "-m", "pip", "wheel", "--verbose",
                          "--no-build-isolation", "--no-deps", "--wheel-dir",
                          "/w/src/torchvision/dist", ".")
    assert build.cwd == "/w/src/torchvision"
    assert build.env["FORCE_CUDA"] == "1" and build.env["PYTORCH_ROCM_ARCH"] == "gfx1100"
    assert "FORCE_CUDA" not in steps["torchaudio-build"].env
    assert steps["torchaudio-build"].env["USE_ROCM"] == "1"
    assert steps["torchvision-checkout"].inputs["ref"] == "v0.23.0"
    assert steps["torchvision-checkout"].volatile and steps["torchvision-patches"].volatile
    assert steps["companions-collect"].inputs["companions"] == ("torchvision", "torchaudio")
    assert "torchvision: v0.23.0 from https://github.com/pytorch/vision.git" in " ".join(
        plan.notes)
    doc = json.loads(json.dumps(plan.to_json()))
    assert [c["ref"] for c in doc["settings"]["companions"]] == ["v0.23.0", "v2.8.0"]


def test_plan_table_has_one_row_per_companion() -> None:
    from rocmforge.plan.report import settings_rows

    rows = dict(settings_rows(_plan(("torchvision", "torchaudio"), version="2.13.0")))
    assert rows["companion torchvision"] == ("v0.28.0 of https://github.com/pytorch/vision.git "
                                             "(needs torch ==2.13.*)")
    assert rows["companion torchaudio"].startswith("skipped: no torchaudio release for torch "
                                                   "2.13")
    assert "companions" not in rows


def test_adding_companions_leaves_torchs_steps_unchanged() -> None:
    without = {s.name: s.digest() for s in _plan(()).steps}
    with_them = {s.name: s.digest() for s in _plan(("torchvision",)).steps}
    assert {k: with_them[k] for k in without} == without


def test_a_full_commit_ref_is_not_volatile_and_repo_override_is_used() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    steps = {s.name: s for s in _plan((f"torchvision@{sha}",),
                                      companion_repos={"torchvision": "file:///v"}).steps}
    assert not steps["torchvision-checkout"].volatile
    assert steps["torchvision-checkout"].inputs["repo"] == "file:///v"


def test_torch_2_13_plans_torchvision_and_skips_torchaudio_with_a_note() -> None:
    plan = _plan(("torchvision", "torchaudio"), version="2.13.0")
    names = [s.name for s in plan.steps]
    assert "torchvision-build" in names and not any(n.startswith("torchaudio") for n in names)
    assert any(n.startswith("torchaudio is skipped: no torchaudio release for torch 2.13")
               for n in plan.notes)


def test_only_skipped_companions_add_no_steps() -> None:
    plan = _plan(("torchaudio",), version="2.12.0")
    assert plan.steps[-1].name == "install"


def test_plan_refuses_a_mismatched_tag_and_unknown_repo_names() -> None:
    with pytest.raises(UsageError, match=r"torchaudio 2\.9\.0 \(the ref v2\.9\.0\) needs torch "
                                         r"==2\.9\.\*, but this build makes torch 2\.8\.0"):
        _plan(("torchaudio@v2.9.0",))
    with pytest.raises(UsageError, match="companion_repos names torchtext") as refused:
        _plan(("torchvision",), companion_repos={"torchtext": "x"})
    # The fix names every name the setting takes: the extension recipes' too.
    assert "use the names torchvision, torchaudio, flash-attention, " in str(refused.value)


# ------------------------------------------------------------------------------- the manifest


def test_manifest_companions_accessor(tmp_path: Path) -> None:
    doc = {"schema": "rocmforge.manifest/1", "targets": ["gfx1100"],
           "wheels": {"torch": "t.whl", "triton": "", "torchvision": "v.whl"},
           "companions": {"torchvision": {"version": "0.23.0", "ref": "v0.23.0", "commit": "c",
                                          "repo": "r", "wheel": "v.whl", "sha256": "s",
                                          "torch": "2.8.0", "requires": "==2.8.*",
                                          "patches": [{"file": "torchvision/0001-x.patch",
                                                       "sha256": "p"}]}}}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(doc))
    record = read_manifest(path).companions["torchvision"]
    assert (record.version, record.commit, record.wheel, record.torch) == (
        "0.23.0", "c", "v.whl", "2.8.0")
    assert record.patches == (("torchvision/0001-x.patch", "p"),)
    doc["companions"]["torchvision"]["commit"] = 7  # type: ignore[index]
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="companions.torchvision must hold the text fields"):
        _ = read_manifest(path).companions
    del doc["companions"]
    path.write_text(json.dumps(doc))
    assert read_manifest(path).companions == {}
