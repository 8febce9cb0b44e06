"""rocmforge.probes.tree: the facts a PyTorch checkout states, read from real git trees of
each era (tests/treefixtures.py) and from single files written to broken shapes."""

from __future__ import annotations

from pathlib import Path

import pytest
from treefixtures import (
    PIN_24_ROCM,
    PIN_29,
    PIN_214,
    PIN_FUTURE,
    EraRepo,
    build_era_repo,
    cmakelists,
)

from rocmforge.errors import UsageError
from rocmforge.probes.tree import (
    ABSENT,
    FOUND,
    MALFORMED,
    UNKNOWN,
    TreeFacts,
    read_tree_facts,
)

pytestmark = pytest.mark.needs_tool("git")


@pytest.fixture(scope="module")
def eras(tmp_path_factory: pytest.TempPathFactory) -> EraRepo:
    return build_era_repo(tmp_path_factory.mktemp("eras"))


@pytest.fixture(scope="module")
def trees(eras: EraRepo, tmp_path_factory: pytest.TempPathFactory) -> dict[str, TreeFacts]:
    root = tmp_path_factory.mktemp("checkouts")
    return {ref: read_tree_facts(eras.worktree(ref, root / ref.replace("/", "-")))
            for ref in ("v2.4.0", "v2.9.1", "v2.14.0", "v2.99.0", "oom")}


def _values(facts: TreeFacts) -> dict[str, object]:
    return {
        "version": facts.version.value,
        "triton_pin": facts.triton_pin.value,
        "triton_pin_file": facts.triton_pin_file.value,
        "triton_version": facts.triton_version.value,
        "cmake_minimum": facts.cmake_minimum.value,
        "cmake_pin": facts.cmake_pin.value,
        "cxx_standard": facts.cxx_standard.value,
        "gcc_minimum": facts.gcc_minimum.value,
        "clang_minimum": facts.clang_minimum.value,
        "build_backend": facts.build_backend.value,
        "has_setup_py": facts.has_setup_py,
        "requires_python": facts.requires_python.value,
        "python_max": facts.python_max.value,
    }


ROCM = ".ci/docker/ci_commit_pins/triton-rocm.txt"
SHARED = ".ci/docker/ci_commit_pins/triton.txt"

EXPECTED = {
    "v2.4.0": {
        "version": "2.4.0", "triton_pin": PIN_24_ROCM, "triton_pin_file": ROCM,
        "triton_version": "3.0.0", "cmake_minimum": "3.18", "cmake_pin": None,
        "cxx_standard": 17, "gcc_minimum": "9.3", "clang_minimum": None,
        "build_backend": "setuptools.build_meta:__legacy__", "has_setup_py": True,
        "requires_python": ">=3.8", "python_max": "3.12",
    },
    "v2.9.1": {
        "version": "2.9.1", "triton_pin": PIN_29, "triton_pin_file": SHARED,
        "triton_version": "3.5.1", "cmake_minimum": "3.18", "cmake_pin": ">=3.27",
        "cxx_standard": 17, "gcc_minimum": "9.3", "clang_minimum": None,
        "build_backend": "setuptools.build_meta", "has_setup_py": True,
        "requires_python": ">=3.10", "python_max": "3.14",
    },
    "v2.14.0": {
        "version": "2.14.0", "triton_pin": PIN_214, "triton_pin_file": SHARED,
        "triton_version": "3.8.0", "cmake_minimum": "3.27", "cmake_pin": ">=3.27",
        "cxx_standard": 20, "gcc_minimum": "11.3", "clang_minimum": "16",
        "build_backend": "scikit_build_core.build", "has_setup_py": False,
        "requires_python": ">=3.10", "python_max": "3.15",
    },
    "v2.99.0": {
        "version": "2.99.0", "triton_pin": PIN_FUTURE, "triton_pin_file": SHARED,
        "triton_version": "4.0.0", "cmake_minimum": "3.31", "cmake_pin": ">=3.31",
        "cxx_standard": 23, "gcc_minimum": "13.1", "clang_minimum": "18",
        "build_backend": "scikit_build_core.build", "has_setup_py": False,
        "requires_python": ">=3.12", "python_max": "3.16",
    },
}


@pytest.mark.parametrize("era", sorted(EXPECTED))
def test_each_era_is_read_fact_by_fact(trees: dict[str, TreeFacts], era: str) -> None:
    facts = trees[era]
    assert _values(facts) == EXPECTED[era]
    assert facts.problems == ()


def test_sources_name_the_file_and_line(trees: dict[str, TreeFacts]) -> None:
    old, new = trees["v2.4.0"], trees["v2.14.0"]
    assert old.version.source == "tree: version.txt:1"
    assert old.triton_pin.source == f"tree: {ROCM}:1"
    assert old.cmake_minimum.source == "tree: CMakeLists.txt:1"
    assert old.cxx_standard.source == "tree: CMakeLists.txt:19"  # set(CMAKE_CXX_STANDARD\n 17 ...
    assert old.gcc_minimum.source == "tree: CMakeLists.txt:28"
    assert new.clang_minimum.source == "tree: CMakeLists.txt:37"
    assert old.requires_python.source == "tree: setup.py:9"  # python_min_version = (3, 8, 0)
    assert old.python_max.source == "tree: setup.py:18"  # version_range_max = max(..., 12) + 1
    assert old.build_backend.source == "tree: pyproject.toml:13"
    assert new.requires_python.source == "tree: pyproject.toml:14"
    assert new.python_max.source == "tree: pyproject.toml [project] classifiers"
    assert new.cmake_pin.source == "tree: requirements-build.txt:3"
    assert old.cmake_pin.source == "tree: pyproject.toml [build-system] requires"


def test_what_a_tree_states_is_absent_is_not_unknown(trees: dict[str, TreeFacts]) -> None:
    old = trees["v2.4.0"]
    assert (old.clang_minimum.status, old.clang_minimum.detail) == (
        ABSENT, "no Clang version check that stops the configure")
    assert (old.cmake_pin.status, old.cmake_pin.detail) == (
        ABSENT, "cmake is required without a version")
    # The flag-only `if(... VERSION_LESS 13)` block is not a minimum: 9.3 is.
    assert trees["v2.9.1"].gcc_minimum.value == "9.3"


def test_rocm_components_with_their_conditions(trees: dict[str, TreeFacts]) -> None:
    old = {c.name: c for c in trees["v2.4.0"].rocm_components.value or ()}
    assert list(old)[:3] == ["HIP", "hip", "hsa-runtime64"]
    # HIP_FOUND gates the rest, so HIP is required.
    assert (old["HIP"].required, old["hip"].required, old["rccl"].required) == (True, True, False)
    dev = "ROCM_VERSION_DEV VERSION_GREATER_EQUAL"
    assert old["hipblaslt"].condition == f'HIP_FOUND AND {dev} "5.7.0"'
    assert old["rocfft"].condition == f'HIP_FOUND AND NOT ({dev} "4.1.0")'
    new = {c.name: c for c in trees["v2.14.0"].rocm_components.value or ()}
    # hiprtc is looked for in both branches of if(CMAKE_VERSION ...): only the shared part holds.
    assert (new["hiprtc"].required, new["hiprtc"].condition) == (True, "PYTORCH_FOUND_HIP")
    assert (new["hipsparselt"].required, new["rccl"].condition) == (
        False, "PYTORCH_FOUND_HIP AND UNIX")
    assert "hipdnn" not in new
    future = {c.name: c for c in trees["v2.99.0"].rocm_components.value or ()}
    assert future["hipdnn"].required and future["hipdnn"].line == 30
    assert trees["v2.99.0"].rocm_components.source == "tree: cmake/public/LoadHIP.cmake:11"


def test_a_branch_is_read_as_what_its_files_say(trees: dict[str, TreeFacts]) -> None:
    oom = trees["oom"]
    assert (oom.version.value, oom.cmake_minimum.value, oom.triton_pin.value) == (
        "2.9.1", "3.18", PIN_29)


# ------------------------------------------------------------------ missing and broken files


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_an_empty_folder_is_all_unknown_and_no_error(tmp_path: Path) -> None:
    facts = read_tree_facts(tmp_path)
    statuses = {f.status for f in (facts.version, facts.triton_pin, facts.triton_version,
                                   facts.cmake_minimum, facts.cmake_pin, facts.cxx_standard,
                                   facts.gcc_minimum, facts.clang_minimum, facts.build_backend,
                                   facts.requires_python, facts.python_max,
                                   facts.rocm_components)}
    assert statuses == {UNKNOWN}
    assert facts.version.detail == "no version.txt (the tree does not say its version)"
    assert facts.triton_pin.detail == "neither triton-rocm.txt nor triton.txt is in the tree"
    assert facts.problems == ()


@pytest.mark.parametrize(
    ("files", "attr", "source", "detail"),
    [
        ({"version.txt": "two point nine\n"}, "version", "tree: version.txt",
         "holds 'two point nine', not a version such as 2.9.1 or 2.10.0a0"),
        ({"version.txt": "2.9.1\n2.9.2\n"}, "version", "tree: version.txt",
         "holds '2.9.1\\n2.9.2', not a version such as 2.9.1 or 2.10.0a0"),
        ({".ci/docker/ci_commit_pins/triton.txt": "release/3.5.x\n"}, "triton_pin",
         f"tree: {SHARED}", "holds 'release/3.5.x', not one full 40-hex commit"),
        ({".ci/docker/triton_version.txt": "latest\n"}, "triton_version",
         "tree: .ci/docker/triton_version.txt", "holds 'latest', not a version such as 3.5.0"),
        ({"CMakeLists.txt": "cmake_minimum_required(3.18)\n"}, "cmake_minimum",
         "tree: CMakeLists.txt:1", "cmake_minimum_required(3.18) names no VERSION"),
        ({"CMakeLists.txt": "project(x)\nset(CMAKE_CXX_STANDARD latest)\n"}, "cxx_standard",
         "tree: CMakeLists.txt:2", "CMAKE_CXX_STANDARD is set to 'latest', not a number such "
         "as 17 or 20"),
        ({"requirements-build.txt": "ninja\ncmake>=three\n"}, "cmake_pin",
         "tree: requirements-build.txt:2", "line 2 'cmake>=three' is not a requirement such "
         "as cmake>=3.27"),
        ({"pyproject.toml": "[build-system\nrequires = [\n"}, "build_backend",
         "tree: pyproject.toml", "is not valid TOML (Expected ']' at the end of a table "
         "declaration (at line 1, column 14))"),
        ({"pyproject.toml": '[project]\nrequires-python = "3.10+"\n'}, "requires_python",
         "tree: pyproject.toml:2", "requires-python '3.10+' is not a PEP 440 specifier"),
        ({"cmake/public/LoadHIP.cmake": "if(HIP_FOUND)\n  find_package(rocblas REQUIRED)\n"},
         "rocm_components", "tree: cmake/public/LoadHIP.cmake",
         "1 if() block(s) never closed with endif()"),
    ],
)
def test_a_malformed_file_is_an_error_value(
    tmp_path: Path, files: dict[str, str], attr: str, source: str, detail: str
) -> None:
    facts = read_tree_facts(_tree(tmp_path, files))
    fact = getattr(facts, attr)
    assert (fact.status, fact.value, fact.source, fact.detail) == (MALFORMED, None, source, detail)
    assert facts.problems == (f"{source}: {detail}",)


def test_an_unreadable_file_is_malformed_not_a_crash(tmp_path: Path) -> None:
    # A folder where the file should be: open() fails for root too (a mode of 0 would not).
    (tmp_path / "version.txt").mkdir()
    fact = read_tree_facts(tmp_path).version
    assert (fact.status, fact.detail) == (MALFORMED, "cannot be read (Is a directory)")


def test_a_file_that_is_not_text_is_malformed(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_bytes(b"cmake_minimum_required(VERSION 3.18)\n\xff\xfe\n")
    facts = read_tree_facts(tmp_path)
    for fact in (facts.cmake_minimum, facts.cxx_standard, facts.gcc_minimum, facts.clang_minimum):
        assert (fact.status, fact.detail) == (MALFORMED, "cannot be read (it is not UTF-8 text)")
    assert facts.problems == ("tree: CMakeLists.txt: cannot be read (it is not UTF-8 text)",)


def test_a_setup_py_only_tree_uses_the_legacy_backend(tmp_path: Path) -> None:
    facts = read_tree_facts(_tree(tmp_path, {
        "setup.py": 'setup(name="torch", python_requires=">=3.9",\n'
                    '      classifiers=["Programming Language :: Python :: 3.11"])\n'}))
    assert (facts.build_backend.value, facts.build_backend.source, facts.build_backend.status) \
        == ("setuptools.build_meta:__legacy__", "tree: setup.py", FOUND)
    assert (facts.requires_python.value, facts.requires_python.source) == (
        ">=3.9", "tree: setup.py:1")
    assert facts.python_max.value == "3.11"


def test_comments_and_a_cmake_range_are_understood(tmp_path: Path) -> None:
    text = ("# cmake_minimum_required(VERSION 2.8)\n"
            + cmakelists(floor="3.27...3.31", cxx=20, gcc="11.3").replace(
                "project(Torch CXX C)", "project(Torch CXX C)  # set(CMAKE_CXX_STANDARD 14)"))
    facts = read_tree_facts(_tree(tmp_path, {"CMakeLists.txt": text}))
    assert (facts.cmake_minimum.value, facts.cmake_minimum.source) == (
        "3.27", "tree: CMakeLists.txt:2")
    assert facts.cxx_standard.value == 20


def test_a_path_that_is_not_a_folder_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        read_tree_facts(tmp_path / "missing")
    assert info.value.what == f"{tmp_path / 'missing'} is not a directory"
    assert info.value.exit_code == 2
