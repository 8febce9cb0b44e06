"""Doctor's row for the pinned pip ROCm SDK (issue 40 item 3): the check the build's plan
already makes (sources.rocm_sdk_index), shown as a row. A real HTTP index (pytest-httpserver)
serving a multi-arch SDK release built here as TheRock's index holds it, the same index asked
for a release it lacks, and a closed port."""

from __future__ import annotations

from pathlib import Path

import pytest
from sdkhelpers import make_multi_arch_sdk, serve_wheels
from test_doctor import facts

from rocmforge.plan.sdk_index_row import sdk_index_rows
from rocmforge.settings import Settings

pytestmark = [pytest.mark.needs_tool("cc")]

MULTI = "10.1.0a20260811"
TARGETS = ("gfx1100", "gfx942")


@pytest.fixture
def index(tmp_path: Path, httpserver) -> str:  # noqa: ANN001
    return serve_wheels(httpserver, make_multi_arch_sdk(tmp_path / "sdk", MULTI, TARGETS),
                        prefix="/whl-multi-arch")


def test_the_pinned_release_on_its_index_is_ok(index: str) -> None:
    (row,) = sdk_index_rows(Settings(rocm_sdk=index, rocm_sdk_version=MULTI), facts(),
                            ["gfx1100"])
    assert (row.check, row.status) == ("ROCm SDK index", "OK")
    assert row.detail == (f"{index} lists rocm {MULTI} and rocm-sdk-device-gfx1100 at it")


def test_a_release_the_index_lacks_fails_with_the_plans_fix(index: str) -> None:
    (row,) = sdk_index_rows(Settings(rocm_sdk=index, rocm_sdk_version="10.1.0a20260101"),
                            facts(), ["gfx1100"])
    assert row.status == "FAIL"
    assert row.detail.startswith(f"The index {index} has no rocm 10.1.0a20260101")
    assert row.fix.startswith(f"pass --rocm-sdk-version with a release it has (newest: {MULTI})")


def test_a_target_without_a_device_package_fails(index: str) -> None:
    (row,) = sdk_index_rows(Settings(rocm_sdk=index, rocm_sdk_version=MULTI), facts(),
                            ["gfx1201"])
    assert row.status == "FAIL" and "rocm-sdk-device-gfx1201" in row.detail


def test_an_index_that_does_not_answer_is_a_warning() -> None:
    (row,) = sdk_index_rows(Settings(rocm_sdk="http://127.0.0.1:1/whl-multi-arch/",
                                     rocm_sdk_version=MULTI), facts(), ["gfx1100"])
    assert row.status == "WARN" and row.detail.startswith("cannot check: ")


def test_no_sdk_setting_no_row() -> None:
    assert sdk_index_rows(Settings(), facts(), ["gfx1100"]) == []
