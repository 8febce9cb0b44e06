"""rocmforge.versions: the one reading of dotted versions shared by the probes and the policy."""

from __future__ import annotations

import pytest

from rocmforge.versions import dotted_version, major_of, version_key


@pytest.mark.parametrize(
    ("text", "at_start", "expected"),
    [
        ("cmake version 3.25.1\n\nCMake suite maintained", False, "3.25.1"),
        ("1.11.1\n", False, "1.11.1"),
        ("6.4.0-15396\n", True, "6.4.0"),
        ("  7.10.1", True, "7.10.1"),
        ("ROCm 6.4", True, ""),
        ("ROCm 6.4", False, "6.4"),
        ("garbage", False, ""),
        ("1.2.3.4", False, "1.2.3"),
    ],
)
def test_dotted_version(text: str, at_start: bool, expected: str) -> None:
    assert dotted_version(text, at_start=at_start) == expected


@pytest.mark.parametrize(
    ("version", "width", "key"),
    [
        ("6.4.1", 0, (6, 4, 1)),
        ("9.3", 3, (9, 3, 0)),
        ("11.4.0-ubuntu1", 3, (11, 4, 0)),
        ("7.0.rc1", 0, (7, 0)),
        ("1.2.3.4", 2, (1, 2)),
        ("", 0, ()),
        ("unknown", 3, (0, 0, 0)),
    ],
)
def test_version_key(version: str, width: int, key: tuple[int, ...]) -> None:
    assert version_key(version, width=width) == key


def test_version_key_orders_like_releases() -> None:
    found = ["6.4.1", "", "7.0.2", "6.10.0", "6.4"]
    assert sorted(found, key=version_key) == ["", "6.4", "6.4.1", "6.10.0", "7.0.2"]
    assert version_key("9.3", width=3) == version_key("9.3.0", width=3)


@pytest.mark.parametrize(("version", "major"), [("11.3.0", 11), ("22", 22), ("clang", 0)])
def test_major_of(version: str, major: int) -> None:
    assert major_of(version) == major
