"""The optional parts of a build: the table, the planner, AOTriton's facts from a tree, and
`invoke fetch`'s download + unpack against a real local HTTP server (pytest-httpserver)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
from pathlib import Path

import pytest

from rocmforge.errors import RocmforgeError, UsageError
from rocmforge.knowledge.components import Component
from rocmforge.knowledge.features import image_covers, load_aotriton_table, load_features
from rocmforge.plan.features import AotritonState, plan_features
from rocmforge.probes.rocm_components import ComponentFound
from rocmforge.sources.aotriton import (
    MARKER,
    fetch_from_tree,
    parse_aotriton_cmake,
    parse_version_txt,
    plan_fetch,
)

# --- fixtures: a tree's aotriton files, written here in the shape the real ones have ----------

NEW_CMAKE = """\
if(NOT __AOTRITON_INCLUDED)
  set(__AOTRITON_VER "9.9b")
  set(__AOTRITON_BUILD_VARIANTS "")
  set(__AOTRITON_MANYLINUX_LIST
      "manylinux_2_28"  # rocm6.4
      "manylinux_2_28"  # rocm7.0
      )
  set(__AOTRITON_ROCM_LIST
      "rocm6.4"
      "rocm7.0"
      )
  set(__AOTRITON_SHA256_LIST
      "{rt64}"  # rocm6.4
      "{rt70}"  # rocm7.0
      )
  set(__AOTRITON_IMAGE_LIST
      "amd-gfx942"
      "amd-gfx110x"
     )
  set(__AOTRITON_IMAGE_SHA256_LIST
     "{img942}" # amd-gfx942
     "{img110x}" # amd-gfx110x
     )
  if(USE_ASAN)
    set(__AOTRITON_ROCM_LIST
        "rocm7.0"
        )
  endif()
  set(__AOTRITON_Z "gz")
  list(FIND __AOTRITON_ROCM_LIST "rocm${{__AOTRITON_SYSTEM_ROCM}}" __AOTRITON_RUNTIME_INDEX)
endif()
"""

OLD_CMAKE = """\
file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/.ci/docker/aotriton_version.txt" __AOTRITON_CI_INFO)
if(__AOTRITON_SYSTEM_ROCM VERSION_LESS __AOTRITON_ROCM_LOW)
endif()
"""


def _tarball(top: str, files: dict[str, bytes]) -> bytes:
    """A real .tar.gz with one top folder, as AOTriton's releases are laid out."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


RUNTIME = _tarball("aotriton", {"lib/libaotriton_v2.so": b"\x7fELF runtime",
                                "include/aotriton/flash.h": b"// header\n"})
IMAGE_942 = _tarball("aotriton", {"lib/aotriton.images/amd-gfx942/__signature__": b"942"})
IMAGE_110X = _tarball("aotriton", {"lib/aotriton.images/amd-gfx110x/__signature__": b"110x"})


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _tree(tmp_path: Path, *, rt70: str | None = None) -> Path:
    tree = tmp_path / "pytorch"
    (tree / "cmake/External").mkdir(parents=True)
    (tree / "cmake/External/aotriton.cmake").write_text(NEW_CMAKE.format(
        rt64="0" * 64, rt70=rt70 or _sha(RUNTIME), img942=_sha(IMAGE_942),
        img110x=_sha(IMAGE_110X)))
    return tree


# --- the table --------------------------------------------------------------------------------

def test_every_feature_names_its_variables_and_an_upstream_source() -> None:
    specs = {s.name: s for s in load_features()}
    assert list(specs) == ["flash_attention", "mem_efficient_attention", "ck", "hipblaslt",
                           "distributed", "rccl", "magma", "kineto", "tests"]
    assert specs["flash_attention"].variables == ("USE_FLASH_ATTENTION",)
    assert specs["mem_efficient_attention"].variables == ("USE_MEM_EFF_ATTENTION",)
    assert specs["ck"].variables == ("USE_ROCM_CK_SDPA", "USE_ROCM_CK_GEMM")
    assert specs["rccl"].components == ("rccl",)
    assert specs["tests"].default is False and specs["ck"].default is False
    assert all("pytorch/pytorch:" in s.source or "config/build.toml" in s.source
               for s in specs.values())
    assert "amd-gfx942" in load_aotriton_table().images


# --- the planner -------------------------------------------------------------------------------

def _components(*, rccl: bool) -> list[tuple[Component, ComponentFound]]:
    rows = [(Component(name="hipblaslt", required=True),
             ComponentFound(name="hipblaslt", config=Path("/r/hipblaslt-config.cmake"),
                            version="0.12.0"))]
    rows.append((Component(name="rccl", required=False),
                 ComponentFound(name="rccl", config=Path("/r/rccl-config.cmake") if rccl else None,
                                version="2.22.3" if rccl else "")))
    return rows


def _state(prefix: Path | None = None) -> AotritonState:
    return AotritonState(release=None, table=load_aotriton_table(), fetch=None, prefix=prefix)


def _plan(targets, requested=None, *, rccl=True, state=None, rocm="7.0.2"):
    return plan_features(load_features(), requested or {}, targets, _components(rccl=rccl),
                         state or _state(), rocm_version=rocm)


@pytest.mark.parametrize("target", ["gfx942", "gfx1100"])
def test_default_build_keeps_pytorchs_defaults_on_supported_targets(target: str) -> None:
    plan = _plan([target])
    built = plan.built
    assert built["flash_attention"] and built["mem_efficient_attention"]
    assert not built["ck"] and not built["tests"]
    assert plan.env == {}  # PyTorch's defaults; BUILD_TEST=0 stays in config/build.toml
    assert [r.status for r in plan.rows] == ["OK", "OK"]  # hipblaslt, rccl found
    assert "hipblaslt 0.12.0" in plan.rows[0].detail


TABLE = "config/features.toml [aotriton]"
CK_SRC = "pytorch/pytorch:aten/src/ATen/Context.cpp@8e9714e8"
HIPBLASLT_SRC = "pytorch/pytorch:aten/src/ATen/cuda/detail/CUDAHooks.cpp"
ROWS_AT_ROCM_7 = {
    "gfx942": [
        ("flash_attention", "on",
         f"on by default; AOTriton kernels for gfx942 (amd-gfx942; {TABLE})"),
        ("mem_efficient_attention", "on",
         f"on by default; AOTriton kernels for gfx942 (amd-gfx942; {TABLE})"),
        ("ck", "off", "off by default (pytorch/pytorch:setup.py); features ck=on builds it"),
        ("hipblaslt", "on", f"on by default; listed for gfx942 ({HIPBLASLT_SRC})"),
    ],
    "gfx1100": [
        ("flash_attention", "on",
         f"on by default; AOTriton kernels for gfx1100 (amd-gfx110x; {TABLE})"),
        ("mem_efficient_attention", "on",
         f"on by default; AOTriton kernels for gfx1100 (amd-gfx110x; {TABLE})"),
        ("ck", "off", "off by default (pytorch/pytorch:setup.py); Composable Kernel SDPA and GEMM "
                      f"supports none of gfx1100 (only gfx90a, gfx942, gfx950; {CK_SRC})"),
        ("hipblaslt", "on", f"on by default; listed for gfx1100 ({HIPBLASLT_SRC})"),
    ],
    "gfx1151": [
        ("flash_attention", "on",
         f"on by default; AOTriton kernels for gfx1151 (amd-gfx115x; {TABLE})"),
        ("mem_efficient_attention", "on",
         f"on by default; AOTriton kernels for gfx1151 (amd-gfx115x; {TABLE})"),
        ("ck", "off", "off by default (pytorch/pytorch:setup.py); Composable Kernel SDPA and GEMM "
                      f"supports none of gfx1151 (only gfx90a, gfx942, gfx950; {CK_SRC})"),
        ("hipblaslt", "on", f"on by default; listed for gfx1151 ({HIPBLASLT_SRC})"),
    ],
}


THEROCK_SRC = "ROCm/TheRock:cmake/therock_amdgpu_targets.cmake@02eb4a57"
RCCL_LEFT_OUT = ("upstream builds no RCCL for {targets} (its excluded targets: gfx1103, gfx1150, "
                 f"gfx1152, gfx1153; {THEROCK_SRC})")


@pytest.mark.parametrize("target", sorted(ROWS_AT_ROCM_7))
def test_features_table_rows_for_the_three_targets(target: str) -> None:
    rows = [row[:3] for row in _plan([target]).table_rows()]
    assert rows[:4] == ROWS_AT_ROCM_7[target]
    # gfx1151 (Strix Halo) builds RCCL again (issue 31: TheRock removed its exclusion in 2026).
    assert rows[4:] == [("distributed", "on", "on by default"), ("rccl", "on", "on by default"),
                        ("magma", "on", "on by default"), ("kineto", "on", "on by default"),
                        ("tests", "off", "off by default (config/build.toml); features tests=on "
                                         "builds it")]


def test_ck_asked_for_on_rdna_fails_preflight_and_builds_on_cdna() -> None:
    fail = _plan(["gfx1100"], {"ck": "on"})
    rows = {r.check: r for r in fail.rows}
    assert rows["feature ck"].status == "FAIL"
    assert ("cannot be built: Composable Kernel SDPA and GEMM supports none of gfx1100 (only "
            f"gfx90a, gfx942, gfx950; {CK_SRC})") in rows["feature ck"].detail
    assert fail.env["USE_ROCM_CK_SDPA"] == "0" and fail.env["USE_ROCM_CK_GEMM"] == "0"
    mixed = _plan(["gfx942", "gfx1100"], {"ck": "on"})
    ck = mixed.features[2]
    assert ck.on and mixed.env["USE_ROCM_CK_SDPA"] == "1"
    assert (f"Composable Kernel SDPA and GEMM unused on gfx1100 (supported: gfx90a, gfx942, "
            f"gfx950; {CK_SRC})") in ck.why


def test_hipblaslt_targets_depend_on_the_rocm_release() -> None:
    older = _plan(["gfx1151", "gfx942"], rocm="6.4.1").features[3]
    assert older.on and older.variables == ()
    # getHipblasltSupportedArchs(): gfx1151 from ROCm 7.0 (the fork's table said 6.4.2).
    assert ("hipBLASLt is not used on gfx1151 (from ROCm 7.0): PyTorch falls back to another "
            "library there (supported: gfx90a, gfx942, gfx1100, gfx1101, gfx1103, gfx1200, "
            f"gfx1201, gfx908 at ROCm 6.4.1; {HIPBLASLT_SRC})") in older.why
    only = _plan(["gfx1151"], rocm="6.4.1")
    assert only.features[3].on  # linked anyway; the runtime uses hipBLAS
    assert "no target of this build is in hipBLASLt's list" in only.features[3].why
    asked = _plan(["gfx1151"], {"hipblaslt": "on"}, rocm="6.4.1")
    assert [r.status for r in asked.rows if r.check == "feature hipblaslt"] == ["FAIL"]
    unknown = _plan(["gfx1151"], rocm="").features[3]
    assert unknown.on and "ROCm version unknown: every listed target counted" in unknown.why


def test_hipblaslt_list_mirrors_get_hipblaslt_supported_archs() -> None:
    """Issue 38: the list came from a fork commit (gfx1102 at 6.3, gfx950 at 6.5, gfx1150/1151
    at 6.4.2); PyTorch's own CUDAHooks::getHipblasltSupportedArchs() has gfx1103 (not gfx1102)
    at 6.3 and gfx950, gfx1150, gfx1151 at 7.0."""
    at_6_5 = _plan(["gfx950"], rocm="6.5.0").features[3]
    assert at_6_5.why == (
        "on by default; no target of this build is in hipBLASLt's list (gfx90a, gfx942, "
        f"gfx1100, gfx1101, gfx1103, gfx1200, gfx1201, gfx908 at ROCm 6.5.0; {HIPBLASLT_SRC})")
    assert _plan(["gfx950"], rocm="7.0.2").features[3].why == (
        f"on by default; listed for gfx950 ({HIPBLASLT_SRC})")
    assert _plan(["gfx1103"], rocm="6.3.0").features[3].why == (
        f"on by default; listed for gfx1103 ({HIPBLASLT_SRC})")
    gfx1102 = _plan(["gfx1102"], rocm="7.2.1").features[3]
    assert "no target of this build is in hipBLASLt's list" in gfx1102.why


def test_a_part_without_a_build_switch_cannot_be_turned_off() -> None:
    with pytest.raises(UsageError, match="turns hipblaslt off, which a PyTorch build cannot do"):
        _plan(["gfx942"], {"hipblaslt": "off"})


def test_auto_leaves_attention_out_for_a_target_aotriton_has_no_kernels_for() -> None:
    plan = _plan(["gfx1030"])
    flash = plan.features[0]
    assert not flash.on and flash.why.startswith("off: AOTriton has no kernels for gfx1030")
    assert plan.env["USE_FLASH_ATTENTION"] == "0" and plan.env["USE_MEM_EFF_ATTENTION"] == "0"
    warned = [r for r in plan.rows if r.status == "WARN"]
    assert [r.check for r in warned] == ["feature flash_attention",
                                         "feature mem_efficient_attention"]
    assert warned[0].detail.startswith("flash attention (AOTriton) is left out of this build: "
                                       "AOTriton has no kernels for gfx1030")
    assert warned[0].fix == ("build for a supported target to have it, or set features "
                             "flash_attention=off to leave it out on purpose")


def test_asked_for_but_unsupported_is_a_preflight_fail_with_the_reason() -> None:
    plan = _plan(["gfx1030"], {"flash_attention": "on"})
    fails = [r for r in plan.rows if r.status == "FAIL"]
    assert [r.check for r in fails] == ["feature flash_attention"]
    assert "cannot be built: AOTriton has no kernels for gfx1030" in fails[0].detail
    assert "flash_attention=auto" in fails[0].fix


def test_a_missing_component_turns_rccl_off_or_fails_when_asked() -> None:
    auto = _plan(["gfx942"], rccl=False)
    assert auto.env == {"USE_NCCL": "0", "USE_RCCL": "0"}
    assert "the ROCm component rccl is not installed" in auto.features[5].why
    assert [(r.check, r.status) for r in auto.rows] == [("feature hipblaslt", "OK"),
                                                          ("feature rccl", "WARN")]
    asked = _plan(["gfx942"], {"rccl": "on"}, rccl=False)
    assert [r.status for r in asked.rows] == ["OK", "FAIL"]


@pytest.mark.parametrize("targets", [["gfx1103"], ["gfx1150"], ["gfx1152"], ["gfx1153"],
                                     ["gfx1103", "gfx1152"]])
def test_rccl_is_left_out_for_the_targets_therock_excludes(targets: list[str]) -> None:
    """ROCm/TheRock's therock_amdgpu_targets.cmake excludes rccl for gfx1103, gfx1150, gfx1152
    and gfx1153 (TheRock issue 150): auto leaves RCCL out with that reason (WARN), on is a
    preflight FAIL."""
    reason = RCCL_LEFT_OUT.format(targets=", ".join(targets))
    auto = _plan(targets)
    rccl = auto.features[5]
    assert (rccl.name, rccl.on, rccl.why) == ("rccl", False, f"off: {reason}")
    assert auto.env == {"USE_NCCL": "0", "USE_RCCL": "0"}
    assert auto.built["distributed"]  # torch.distributed stays, with gloo
    rows = {r.check: r for r in auto.rows}
    assert rows["feature rccl"].status == "WARN"
    assert rows["feature rccl"].detail == ("RCCL (the nccl backend of torch.distributed on ROCm) "
                                           f"is left out of this build: {reason}")
    asked = _plan(targets, {"rccl": "on"})
    fail = {r.check: r for r in asked.rows}["feature rccl"]
    assert fail.status == "FAIL"
    assert fail.detail == ("RCCL (the nccl backend of torch.distributed on ROCm) was asked for "
                           f"(features rccl=on) but cannot be built: {reason}")
    assert asked.env == {"USE_NCCL": "0", "USE_RCCL": "0"}


def test_rccl_on_a_mix_keeps_rccl_and_names_the_excluded_target() -> None:
    mixed = _plan(["gfx1100", "gfx1150"], {"rccl": "on"})
    rccl = mixed.features[5]
    assert rccl.on and mixed.env == {"USE_NCCL": "1", "USE_RCCL": "1"}
    assert rccl.why == ("on: the features setting; RCCL has no code for gfx1150: upstream "
                        f"builds none for it ({THEROCK_SRC})")
    # Strix Halo: rccl=on is no longer a false FAIL (TheRock PR #5595 removed the exclusion).
    halo = _plan(["gfx1151"], {"rccl": "on"})
    assert halo.features[5].on and {r.check: r.status for r in halo.rows}["feature rccl"] == "OK"
    assert [(r.check, r.status) for r in mixed.rows] == [("feature hipblaslt", "OK"),
                                                           ("feature rccl", "OK")]
    # gfx1102 is not excluded for rccl (only hipBLASLt and hipSPARSELt are, upstream)
    assert _plan(["gfx1102"]).features[5].why == "on by default"


def test_explicit_choices_set_their_variables() -> None:
    plan = _plan(["gfx942"], {"tests": "on", "ck": "on", "magma": "off", "kineto": "OFF"})
    assert plan.env == {"BUILD_TEST": "1", "USE_ROCM_CK_SDPA": "1", "USE_ROCM_CK_GEMM": "1",
                        "USE_MAGMA": "0", "USE_KINETO": "0"}
    off = _plan(["gfx942"], {"tests": "off"})
    assert "BUILD_TEST" not in off.env  # config/build.toml is the one place it is 0


def test_a_fetched_prefix_goes_into_the_environment(tmp_path: Path) -> None:
    plan = _plan(["gfx942"], state=_state(tmp_path))
    assert plan.env == {"AOTRITON_INSTALLED_PREFIX": str(tmp_path)}
    assert f"AOTriton fetched ({tmp_path})" in plan.features[0].why


@pytest.mark.parametrize("requested, message", [
    ({"flash_atention": "on"}, 'Did you mean "flash_attention"?'),
    ({"flash_attention": "yes"}, "the value 'yes'"),
])
def test_bad_feature_settings_are_refused(requested, message) -> None:
    with pytest.raises(UsageError, match=message):
        _plan(["gfx942"], requested)


# --- AOTriton's facts --------------------------------------------------------------------------

def test_new_format_reads_top_level_lists_not_the_asan_branch(tmp_path: Path) -> None:
    release = parse_aotriton_cmake((_tree(tmp_path) / "cmake/External/aotriton.cmake").read_text())
    assert release.version == "9.9b" and release.rocm == ("rocm6.4", "rocm7.0")
    assert release.compression == "gz" and release.exact_rocm
    assert [i for i, _ in release.images] == ["amd-gfx942", "amd-gfx110x"]
    fetch = plan_fetch(release, "7.0.2", ["gfx1101"], base_url="http://m/")
    assert fetch.runtime is not None
    assert fetch.runtime.url == "http://m/9.9b/aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz"
    assert [a.filename for a in fetch.images] == ["aotriton-9.9b-images-amd-gfx110x.tar.gz"]
    assert plan_fetch(release, "6.3", ["gfx942"]).runtime is None  # not listed: source build


def test_old_format_reads_version_txt_and_clamps_the_rocm() -> None:
    txt = "0.7b\nmanylinux_2_17;manylinux_2_17\nrocm6.1;rocm6.2\nabc123\n" + \
          f"{'1' * 64};{'2' * 64}\ngz\n"
    release = parse_aotriton_cmake(OLD_CMAKE, version_txt=txt)
    assert release == parse_version_txt(txt, source=release.source)
    assert not release.exact_rocm and release.images == ()
    fetch = plan_fetch(release, "6.4.1", ["gfx942"])
    assert fetch.runtime is not None and fetch.runtime.sha256 == "2" * 64
    assert fetch.runtime.filename == "aotriton-0.7b-manylinux_2_17_x86_64-rocm6.2-shared.tar.gz"
    with pytest.raises(RocmforgeError, match="has 2 lines"):
        parse_version_txt("0.7b\ngz\n")


def test_image_rule_matches_aotriton_cmake() -> None:
    assert image_covers("amd-gfx110x", "gfx1100") and image_covers("amd-gfx115x", "gfx1151")
    assert not image_covers("amd-gfx110x", "gfx1030") and image_covers("amd-gfx90a", "gfx90a")


# --- fetching from a real local server ----------------------------------------------------------

def _serve(httpserver, runtime: bytes = RUNTIME) -> str:
    base = "/9.9b/"
    httpserver.expect_request(base + "aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz"
                              ).respond_with_data(runtime)
    httpserver.expect_request(base + "aotriton-9.9b-images-amd-gfx942.tar.gz"
                              ).respond_with_data(IMAGE_942)
    return httpserver.url_for("/")


def test_fetch_unpacks_runtime_and_images_into_one_prefix(tmp_path: Path, httpserver) -> None:
    base = _serve(httpserver)
    fetch, prefix = fetch_from_tree(_tree(tmp_path), "7.0", ["gfx942"], tmp_path / "aotriton",
                                    tmp_path / "downloads", base_url=base, progress=False)
    assert (prefix / "lib/libaotriton_v2.so").read_bytes() == b"\x7fELF runtime"
    assert (prefix / "include/aotriton/flash.h").is_file()
    assert (prefix / "lib/aotriton.images/amd-gfx942/__signature__").read_bytes() == b"942"
    assert (prefix / MARKER).read_text().split() == [a.sha256 for a in fetch.artifacts]
    assert [p.name for p in (tmp_path / "aotriton").iterdir()] == [prefix.name]
    # A second fetch finds the complete prefix and downloads nothing.
    before = len(httpserver.log)
    assert fetch_from_tree(_tree(tmp_path / "again"), "7.0", ["gfx942"], tmp_path / "aotriton",
                           tmp_path / "downloads", base_url=base, progress=False)[1] == prefix
    assert len(httpserver.log) == before


def _nothing_kept(tmp_path: Path) -> None:
    assert not (tmp_path / "aotriton").exists() or not any((tmp_path / "aotriton").iterdir())
    downloads = tmp_path / "downloads"
    assert not downloads.exists() or not any(p.name.endswith("shared.tar.gz")
                                             for p in downloads.iterdir())


def test_wrong_hash_unpacks_nothing(tmp_path: Path, httpserver) -> None:
    base = _serve(httpserver)
    with pytest.raises(RocmforgeError, match="Fetching AOTriton 9.9b's runtime failed: The "
                       "download of aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz "
                       "from .* does not match its published sha256") as err:
        fetch_from_tree(_tree(tmp_path, rt70="ab" * 32), "7.0", ["gfx942"], tmp_path / "aotriton",
                        tmp_path / "downloads", base_url=base, progress=False)
    assert err.value.exit_code == 3  # README "Exit codes": the server sent another file
    _nothing_kept(tmp_path)


def test_404_unpacks_nothing(tmp_path: Path, httpserver) -> None:
    httpserver.expect_request("/9.9b/aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz"
                              ).respond_with_data("not here", status=404)
    with pytest.raises(RocmforgeError, match="Fetching AOTriton 9.9b's runtime failed: Cannot "
                       "fetch .*: the server answered HTTP 404") as err:
        fetch_from_tree(_tree(tmp_path), "7.0", ["gfx942"], tmp_path / "aotriton",
                        tmp_path / "downloads", base_url=httpserver.url_for("/"), progress=False)
    text = str(err.value)
    assert err.value.exit_code == 3  # README "Exit codes"
    assert "listed by the index" not in text  # the wheel-index wording is not AOTriton's
    assert "the URL and sha256 come from tree: cmake/External/aotriton.cmake" in text
    assert "--base-url (or PYTORCH_AOTRITON_BASE_URL)" in text
    _nothing_kept(tmp_path)


def test_truncated_download_unpacks_nothing(tmp_path: Path, httpserver) -> None:
    from werkzeug import Response

    name = "/9.9b/aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz"

    def short(_request):  # claims the full length, sends half: the connection ends early
        response = Response(RUNTIME[: len(RUNTIME) // 2])
        response.headers["Content-Length"] = str(len(RUNTIME))
        response.automatically_set_content_length = False
        return response

    httpserver.expect_request(name).respond_with_handler(short)
    with pytest.raises(RocmforgeError, match="truncated|broke off"):
        fetch_from_tree(_tree(tmp_path), "7.0", ["gfx942"], tmp_path / "aotriton",
                        tmp_path / "downloads", base_url=httpserver.url_for("/"), progress=False)
    _nothing_kept(tmp_path)


def test_timeout_unpacks_nothing(tmp_path: Path, httpserver) -> None:
    name = "/9.9b/aotriton-9.9b-manylinux_2_28_x86_64-rocm7.0-shared.tar.gz"

    def slow(_request):
        time.sleep(1.5)
        from werkzeug import Response
        return Response(RUNTIME)

    httpserver.expect_request(name).respond_with_handler(slow)
    with pytest.raises(RocmforgeError, match="timed out after 0.5 s") as info:
        fetch_from_tree(_tree(tmp_path), "7.0", ["gfx942"], tmp_path / "aotriton",
                        tmp_path / "downloads", base_url=httpserver.url_for("/"),
                        progress=False, timeout_s=0.5)
    assert info.value.exit_code == 3  # the network, not the input: the kit's exit 3
    _nothing_kept(tmp_path)


# --- the build's own AOTriton download failing: triage names it (real cmake 3.25 logs) ---------

@pytest.mark.parametrize("log, signature, cause", [
    ("aotriton_download_refused.log", "aotriton-download",
     "the build could not download AOTriton (http://127.0.0.1:9/0.10b/aotriton-0.10b-"
     "manylinux_2_28_x86_64-rocm6.2-shared.tar.gz): PyTorch's cmake/External/aotriton.cmake"),
    ("aotriton_download_hash_mismatch.log", "aotriton-download-hash",
     "the SHA256 hash of the AOTriton tarball the build downloaded "
     "(cmake/External/aotriton.cmake) does not match the hash the tree names"),
])
def test_triage_names_aotritons_download_and_says_fetch(log: str, signature: str,
                                                        cause: str) -> None:
    from rocmforge.triage import explain_file

    found = explain_file(Path(__file__).parents[1] / "fixtures" / "logs" / log, step="build")
    assert found.rule == signature
    assert found.cause.startswith(cause)
    assert "`invoke fetch`" in found.fix and "AOTRITON_INSTALLED_PREFIX" in found.fix
