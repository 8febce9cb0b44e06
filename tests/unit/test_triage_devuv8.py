"""uv's own words for the Python packaging failures pip words otherwise (issue 40, devuv8):
each text is what uv prints (0.13.9 run here, as make/devuv8.sh does; and the same message
behind the older cause prefixes "Caused by:" and "╰─▶", which only change what precedes it),
with the values the reading must take out of it, and the look-alikes that must claim nothing."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_REFUSED = """error: Request failed after 3 retries in 1.2s
  {p}Failed to fetch: {q}https://repo.example.org/rocm/simple/rocm-sdk-core/{q}
  {p}error sending request for url (https://repo.example.org/rocm/simple/rocm-sdk-core/)
  {p}client error (Connect)
  {p}tcp connect error
  {p}Connection refused (os error 111)
"""

_CONFLICT = """error: No solution found when resolving dependencies
  cause: Because all versions of torchapp depend on torch==2.5.1 and you require torchapp, we can
         conclude that you require torch==2.5.1.
         And because you require torch==2.6.0+cpu, we can conclude that your requirements are
         unsatisfiable.
"""

_PYTHON = """  × No solution found when resolving dependencies:
  ╰─▶ Because the current Python version (3.10.12) does not satisfy Python>=3.11 and
      all versions of vllm-rocm depend on Python>=3.11, we can conclude that all versions of
      vllm-rocm cannot be used.
"""


@pytest.mark.parametrize("prefix", ["cause: ", "Caused by: ", "╰─▶ "])
def test_a_hash_mismatch_names_the_package_whatever_the_cause_prefix(prefix: str) -> None:
    text = (f"error: Failed to download `torch==2.5.1+rocm6.2`\n  {prefix}Hash mismatch for "
            "`torch==2.5.1+rocm6.2`\n\n  Expected:\n    sha256:00\n\n  Computed:\n    sha256:c1\n")
    assert_reads(text, "python-packaging", "torch", "uv-hash-mismatch",
                 ("torch 2.5.1+rocm6.2", "--hash"))


def test_uv_hash_mismatch_of_a_python_download_is_not_a_package_pin() -> None:
    # uv python install's own check names an installation key, not name==version
    text = ("error: Failed to install cpython-3.12.7-linux-x86_64-gnu\n  Caused by: Hash "
            "mismatch for `cpython-3.12.7-linux-x86_64-gnu`\n")
    assert explain_text(text).rule != "uv-hash-mismatch"


@pytest.mark.parametrize(("prefix", "quote"), [("cause: ", ""), ("Caused by: ", "`")])
def test_an_unreachable_index_names_the_package_of_the_page(prefix: str, quote: str) -> None:
    assert_reads(_REFUSED.format(p=prefix, q=quote), "python-packaging", "rocm-sdk-core",
                 "uv-index-unreachable", ("repo.example.org", "Connection refused (os error 111)"))


def test_a_refused_connection_without_uvs_fetch_line_is_not_uvs_index() -> None:
    text = ("error: Request failed after 3 retries\n  cause: tcp connect error\n"
            "  cause: Connection refused (os error 111)\n")
    assert explain_text(text).rule != "uv-index-unreachable"


def test_an_index_root_that_names_no_package_claims_nothing_of_uv() -> None:
    text = _REFUSED.format(p="cause: ", q="").replace("/rocm-sdk-core/", "/")
    assert explain_text(text).rule != "uv-index-unreachable"


@pytest.mark.parametrize(("line", "subject"), [
    # the requirement named after "you require", then wrapped (uv 0.13.9, COLUMNS=100)
    ("  cause: Because torch was not found in the provided package locations and you require "
     "torch==2.5.1+rocm6.4, we can conclude that your requirements are unsatisfiable.", "torch"),
    ("  cause: Because future-only was not found in the provided package locations and you "
     "require\n         future-only, we can conclude that your requirements are unsatisfiable.",
     "future-only"),
    ("  ╰─▶ Because rocm-sdk-core was not found in the package registry and you require "
     "rocm-sdk-core, we can conclude that your requirements are unsatisfiable.", "rocm-sdk-core"),
])
def test_not_found_in_the_locations_names_the_package(line: str, subject: str) -> None:
    assert_reads("error: No solution found when resolving dependencies\n" + line,
                 "python-packaging", subject, "uv-not-found", (subject,))


def test_pytorch_triton_rocm_not_found_is_left_to_the_triton_answer() -> None:
    text = ("  ╰─▶ Because pytorch-triton-rocm was not found in the provided package locations "
            "and you require pytorch-triton-rocm, we can conclude that your requirements are "
            "unsatisfiable.\n")
    assert explain_text(text).rule != "uv-not-found"


def test_another_package_named_after_you_require_is_not_this_one() -> None:
    text = ("  cause: Because torch was not found in the provided package locations and you "
            "require torchvision, we can conclude that …\n")
    assert explain_text(text).rule != "uv-not-found"


def test_a_requires_python_wrapped_before_the_package_names_it() -> None:
    assert_reads(_PYTHON, "python-packaging", "vllm-rocm", "uv-requires-python",
                 ("Python >=3.11", "3.10.12", "uv venv --python"))


def test_the_projects_requested_python_range_is_read_as_such() -> None:
    text = ("  ╰─▶ Because the requested Python version (>=3.9) does not satisfy Python>=3.10 "
            "and torch==2.6.0 depends on Python>=3.10, we can conclude that torch==2.6.0 "
            "cannot be used.\n")
    assert_reads(text, "python-packaging", "torch", "uv-requires-python",
                 ("requires-python (>=3.9)", "narrow requires-python"))


def test_a_pin_a_dependency_contradicts_names_both_pins() -> None:
    assert_reads(_CONFLICT, "python-packaging", "torch", "uv-pin-conflict",
                 ("torch==2.6.0+cpu", "torchapp depends on torch==2.5.1"))


def test_the_same_pin_twice_is_no_conflict_to_read() -> None:
    text = _CONFLICT.replace("torch==2.6.0+cpu", "torch==2.5.1")
    assert explain_text(text).rule != "uv-pin-conflict"


@pytest.mark.parametrize("text", [
    "  cause: A path (winonly-1.0-cp311-cp311-win_amd64.whl) dependency is incompatible with "
    "the current\n         platform\n",
    # a long name wraps the sentence after the wheel
    "  Caused by: A path\n  (torch-2.5.1+rocm6.2-cp312-cp312-manylinux_2_28_x86_64.whl) "
    "dependency is\n  incompatible with the current platform\n",
])
def test_a_wheel_for_another_platform_names_its_package(text: str) -> None:
    found = explain_text("error: Failed to determine installation plan\n" + text)
    assert (found.klass, found.rule) == ("python-packaging", "uv-incompatible-wheel")
    assert found.subject in ("winonly", "torch")
    assert found.subject in found.fix


def test_the_system_python_refused_by_uv_is_pep_668() -> None:
    text = ("Using Python 3.11.2 environment at: /usr\nerror: The interpreter at `/usr` is "
            "externally managed, and indicates the following:\n\n  To install Python packages "
            "system-wide, try apt install\n")
    assert_reads(text, "python-packaging", "pip", "uv-externally-managed", ("PEP 668", "venv"))


def test_uvs_replaced_torch_pair_reads_as_before() -> None:
    text = "Uninstalled 1 package in 1ms\nInstalled 1 package in 1ms\n - torch==2.5.1+rocm6.2\n" \
           " + torch==2.6.0+cpu\n"
    assert_reads(text, "python-packaging", "torch", "uv-replaces-rocm-torch")


@pytest.mark.parametrize("text", [
    "  ╰─▶ Because rocm-sdk-libraries-gfx110x-dgpu was not found in the provided package\n"
    "      locations and you require rocm-sdk-libraries-gfx110x-dgpu, we can conclude that your\n",
    "  ╰─▶ Because rocm-sdk-libraries-gfx110x-dgpu was not found in the provided\n"
    "      package locations and you require rocm-sdk-libraries-gfx110x-dgpu, we can conclude\n",
])
def test_not_found_wrapped_inside_its_words_is_read_whole(text: str) -> None:
    assert_reads(text, "python-packaging", "rocm-sdk-libraries-gfx110x-dgpu", "uv-not-found")


def test_a_requires_python_wrapped_before_the_version_spec_is_read_whole() -> None:
    text = ("  ╰─▶ Because the current Python version (3.9.18) does not satisfy Python>=3.10 "
            "and torch==2.6.0 depends on\n      Python>=3.10, we can conclude that torch==2.6.0 "
            "cannot be used.\n")
    assert_reads(text, "python-packaging", "torch", "uv-requires-python", ("3.9.18",))


def test_a_dependency_needing_a_python_is_no_claim_without_uvs_python_clause() -> None:
    text = "Because foo==1.0 depends on Python>=3.10 and you require foo, we can conclude …\n"
    assert explain_text(text).rule != "uv-requires-python"


_MISSING = """error: Failed to fetch: {url}
  cause: HTTP status client error (404 Not Found) for url
         ({url})
"""


def test_a_file_the_index_links_but_does_not_serve_names_its_package() -> None:
    url = "https://repo.example.org/whl/rocm_sdk_core-7.9.0-py3-none-linux_x86_64.whl"
    assert_reads(_MISSING.format(url=url), "python-packaging", "rocm-sdk-core", "uv-http-404",
                 ("404", "rocm_sdk_core-7.9.0-py3-none-linux_x86_64.whl"))


@pytest.mark.parametrize("url", [
    "https://repo.example.org/simple/torch/",  # a page: uv's not-found, not a broken link
    "https://download.pytorch.org/whl/nightly/rocm6.1/torch-2.5.0.dev20240901%2Brocm6.1-cp311-"
    "cp311-linux_x86_64.whl",  # PyTorch's stale nightlies: pip_download's answer
])
def test_a_404_that_is_not_a_broken_file_link_is_not_read_as_one(url: str) -> None:
    assert explain_text(_MISSING.format(url=url)).rule != "uv-http-404"
