"""knowledge.parsed_toml: read_toml keeps parsed documents by content, across runs."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest

from rocmforge.knowledge import parsed_toml, toml_files
from rocmforge.knowledge.toml_files import config_dir, read_toml


@pytest.fixture
def parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts tomllib really parsed (the cache in a folder of this test)."""
    monkeypatch.setenv("ROCMFORGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(parsed_toml.DISABLE_ENV, raising=False)
    seen: list[str] = []
    toml = toml_files._toml_module()
    real = toml.loads

    def counted(text: str, **kwargs: object) -> dict[str, object]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(toml, "loads", counted)
    return seen


def test_a_document_is_parsed_once_and_an_edit_is_seen(tmp_path: Path, parses: list[str]) -> None:
    doc = tmp_path / "build.toml"
    doc.write_text('[env]\nUSE_ROCM = "1"\nratio = 0.5\nlist = [1, 2]\n')
    first = read_toml(doc)
    assert first == {"env": {"USE_ROCM": "1", "ratio": 0.5, "list": [1, 2]}}
    assert read_toml(doc) == first and len(parses) == 1
    first["env"]["USE_ROCM"] = "changed"  # type: ignore[index]
    assert read_toml(doc)["env"] == {"USE_ROCM": "1", "ratio": 0.5, "list": [1, 2]}
    # Same size, same mtime, other bytes: parsed again.
    stat = doc.stat()
    doc.write_text('[env]\nUSE_ROCM = "0"\nratio = 0.5\nlist = [1, 2]\n')
    os.utime(doc, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert read_toml(doc)["env"]["USE_ROCM"] == "0"  # type: ignore[index]
    assert len(parses) == 2
    assert len(list((tmp_path / "cache" / "toml").glob("*.json"))) == 2


def test_the_kit_config_reads_the_same_from_the_cache(parses: list[str]) -> None:
    for path in sorted(config_dir().glob("*.toml")):
        fresh = read_toml(path)
        assert read_toml(path) == fresh, path
    assert len(parses) == len(list(config_dir().glob("*.toml")))


def test_dates_are_never_kept(tmp_path: Path, parses: list[str]) -> None:
    doc = tmp_path / "dated.toml"
    doc.write_text("released = 2025-06-01\n")
    assert read_toml(doc) == {"released": datetime.date(2025, 6, 1)}
    assert read_toml(doc) == {"released": datetime.date(2025, 6, 1)}
    assert len(parses) == 2


def test_switched_off_or_broken_cache_parses(tmp_path: Path, parses: list[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    doc = tmp_path / "a.toml"
    doc.write_text("x = 1\n")
    read_toml(doc)
    for stored in (tmp_path / "cache" / "toml").glob("*.json"):
        stored.write_text("{broken")
    assert read_toml(doc) == {"x": 1} and len(parses) == 2
    monkeypatch.setenv(parsed_toml.DISABLE_ENV, "0")
    assert read_toml(doc) == {"x": 1} and read_toml(doc) == {"x": 1}
    assert len(parses) == 4


def test_bad_toml_is_still_a_config_error(tmp_path: Path, parses: list[str]) -> None:
    from rocmforge.errors import ConfigError

    doc = tmp_path / "bad.toml"
    doc.write_text("x = \n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        read_toml(doc)
    with pytest.raises(ConfigError, match="does not exist"):
        read_toml(tmp_path / "missing.toml")
