"""Add-ons: companions and extensions read by one reader, planned from one choice record, and a
recipe's verify op checked when config/extensions.toml loads."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.errors import ConfigError
from rocmforge.knowledge.addons import KIND_EXTENSION, VERIFY_OPS, AddOnChoice
from rocmforge.knowledge.companions import load_companions
from rocmforge.knowledge.extensions import load_extensions
from rocmforge.plan.companion_steps import companion_notes, companion_steps
from rocmforge.sources.companion_peek import check_extension_pins, check_extension_targets
from rocmforge.verify.checks import extensions as verify_extensions
from rocmforge.workdir import WorkDir

REPO = Path(__file__).resolve().parents[2]


def _config_with(tmp_path: Path, old: str, new: str) -> Path:
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    path = config / "extensions.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return config


def test_every_verify_op_a_recipe_names_is_one_verify_implements() -> None:
    assert set(verify_extensions.OPS) == set(VERIFY_OPS)
    named = {r.verify for r in load_extensions().recipes.values() if r.verify}
    assert named == {"flash_attn_func", "linear8bitlt", "memory_efficient_attention"}
    assert named <= set(VERIFY_OPS)


def test_a_misspelled_verify_op_is_a_load_error_naming_the_file_and_the_op(
        tmp_path: Path) -> None:
    config = _config_with(tmp_path, 'verify = "linear8bitlt"', 'verify = "linear8bitLt"')
    with pytest.raises(ConfigError) as info:
        load_extensions(config)
    text = str(info.value)
    assert str(config / "extensions.toml") in text
    assert "[extension.bitsandbytes]" in text
    assert 'verify = "linear8bitLt" is no op' in text
    assert 'Did you mean "linear8bitlt"?' in text


def test_an_empty_verify_op_means_import_only_and_loads(tmp_path: Path) -> None:
    config = _config_with(tmp_path, 'verify = "linear8bitlt"', 'verify = ""')
    assert load_extensions(config).recipes["bitsandbytes"].verify == ""


def test_a_verify_key_in_a_companion_is_refused_like_any_unknown_key(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    path = config / "companions.toml"
    path.write_text(path.read_text().replace('build_env = { FORCE_CUDA = "1" }',
                                             'build_env = { FORCE_CUDA = "1" }\nverify = "nms"'))
    with pytest.raises(ConfigError) as info:
        load_companions(config)
    assert 'Unknown key "verify"' in str(info.value)
    assert "[companion.torchvision]" in str(info.value)


@pytest.mark.needs_tool("hipcc")  # `plan` needs a ROCm install: Debian's under /usr
def test_plan_stops_on_an_unknown_verify_op_with_exit_2_and_one_paragraph(
        tmp_path: Path) -> None:
    config = _config_with(tmp_path, 'verify = "flash_attn_func"', 'verify = "flash_attn"')
    proj = tmp_path / "proj"
    proj.mkdir()
    proj.joinpath("tasks.py").write_text("from rocmforge.tasks import ns\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCMFORGE_")}
    env["ROCMFORGE_CONFIG_DIR"] = str(config)
    done = subprocess.run(
        ["python3", "-m", "invoke", "plan", "--arch", "gfx942", "--with", "flash-attention",
         "--work-dir", str(tmp_path / "work")],
        cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "Traceback" not in said
    assert 'verify = "flash_attn" is no op' in said
    assert "extensions.toml" in said
    assert not (tmp_path / "work").exists()


def _companion() -> AddOnChoice:
    return AddOnChoice(name="torchvision", package="torchvision", repo="r", ref="v0.23.0",
                       version="0.23.0", origin="table", requires="==2.8.*",
                       build_env={"FORCE_CUDA": "1"})


def _extension() -> AddOnChoice:
    return AddOnChoice(kind=KIND_EXTENSION, name="bitsandbytes", package="bitsandbytes",
                       repo="r2", ref="main", origin="recipe", form="recipe",
                       build_env={"BNB_ROCM_ARCH": "gfx942"},
                       pre_build=(("cmake", "--build", "build"),), verify="linear8bitlt")


def test_one_choice_record_plans_both_kinds(tmp_path: Path) -> None:
    steps = companion_steps((_companion(), _extension()), workdir=WorkDir(root=tmp_path / "w"),
                            build_env={}, pip_env={}, mirrors={})
    assert [s.name for s in steps] == [
        "torchvision-checkout", "torchvision-pairing", "torchvision-patches", "torchvision-build",
        "bitsandbytes-checkout", "bitsandbytes-pairing", "bitsandbytes-patches",
        "bitsandbytes-prepare-1", "bitsandbytes-build", "companions-collect",
        "companions-install"]
    pairing = {s.name: s.argv[0] for s in steps if s.name.endswith("-pairing")}
    assert pairing == {"torchvision-pairing": "companion-pairing",
                       "bitsandbytes-pairing": "extension-pairing"}
    notes = companion_notes((_companion(), _extension()))
    assert notes[0].startswith("torchvision: v0.23.0 from r (the release for this torch")
    assert notes[1].startswith("extension bitsandbytes: main from r2; built with "
                               "BNB_ROCM_ARCH=gfx942")


def test_a_companion_has_nothing_for_the_extension_peeks_to_read() -> None:
    def no_peek(*args: object) -> str:
        raise AssertionError(f"peeked {args}")

    assert check_extension_pins((_companion(),), "2.8.0", peek=no_peek) == []
    assert check_extension_targets((_companion(),), peek=no_peek) == []


def test_the_records_keep_their_shape() -> None:
    assert set(_companion().as_dict()) == {"name", "package", "repo", "ref", "version",
                                           "origin", "requires", "skipped", "build_env"}
    extension = _extension().as_dict()
    assert (extension["kind"], extension["verify"], extension["pre_build"]) == (
        "extension", "linear8bitlt", [["cmake", "--build", "build"]])


def test_one_table_names_every_add_on_with_its_kind_source_variables_and_op() -> None:
    from rocmforge.knowledge.addon_table import load_addons
    from rocmforge.knowledge.addons import KIND_COMPANION

    table = load_addons()
    assert table.names == ("torchvision", "torchaudio", "flash-attention", "bitsandbytes",
                           "xformers", "vllm", "apex")
    vision, flash, bnb = (table.addons[n] for n in ("torchvision", "flash-attention",
                                                   "bitsandbytes"))
    assert (vision.kind, vision.repo, vision.targets_var, dict(vision.switches),
            vision.verify) == (KIND_COMPANION, "https://github.com/pytorch/vision.git", "",
                               {"FORCE_CUDA": "1"}, "")
    assert (flash.kind, flash.targets_var, dict(flash.switches), flash.verify) == (
        KIND_EXTENSION, "GPU_ARCHS", {"BUILD_TARGET": "rocm"}, "flash_attn_func")
    assert (bnb.package, bnb.targets_var, bnb.verify) == (
        "bitsandbytes", "BNB_ROCM_ARCH", "linear8bitlt")
