"""The tool-output cache: one answer per tool file identity, asked again when the file changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rocmforge.probes import tool_cache


def test_answer_is_kept_per_file_and_arguments(tmp_path: Path, cache_dir: Path) -> None:
    tool = tmp_path / "gcc-11"
    tool.write_text("#!/bin/sh\n")
    calls: list[str] = []

    def ask(answer: str):
        def inner() -> str:
            calls.append(answer)
            return answer

        return inner

    assert tool_cache.cached_output(tool, ("--version",), ask("v1")) == "v1"
    assert tool_cache.cached_output(tool, ("--version",), ask("v2")) == "v1"
    assert tool_cache.cached_output(tool, ("-dumpfullversion",), ask("11.3.0")) == "11.3.0"
    assert calls == ["v1", "11.3.0"]
    stored = json.loads((cache_dir / tool_cache.CACHE_NAME).read_text())
    assert sorted(k.rsplit("|", 1)[1] for k in stored) == ["--version", "-dumpfullversion"]
    # A new process (empty memory) reads the file instead of asking.
    tool_cache._memory.clear()
    assert tool_cache.cached_output(tool, ("--version",), ask("v3")) == "v1"
    assert calls == ["v1", "11.3.0"]


def test_a_changed_tool_is_asked_again(tmp_path: Path, cache_dir: Path) -> None:
    tool = tmp_path / "hipcc"
    tool.write_text("#!/bin/sh\n")
    assert tool_cache.cached_output(tool, ("--version",), lambda: "HIP version: 5.2") == (
        "HIP version: 5.2"
    )
    tool.write_text("#!/bin/sh\n# upgraded\n")
    stat = tool.stat()
    os.utime(tool, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert tool_cache.cached_output(tool, ("--version",), lambda: "HIP version: 7.0") == (
        "HIP version: 7.0"
    )


def test_failed_answers_and_missing_tools_are_not_kept(tmp_path: Path, cache_dir: Path) -> None:
    tool = tmp_path / "clang-99"
    tool.write_text("")
    assert tool_cache.cached_output(tool, ("--version",), lambda: None) is None
    assert tool_cache.cached_output(tool, ("--version",), lambda: "clang 99") == "clang 99"
    missing = tmp_path / "absent"
    assert tool_cache.cached_output(missing, ("--version",), lambda: "x") == "x"
    assert tool_cache.cached_output(missing, ("--version",), lambda: "y") == "y"


def test_unwritable_cache_only_costs_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(tool_cache.CACHE_DIR_ENV, str(blocker / "sub"))  # a folder under a file
    monkeypatch.setattr(tool_cache, "_memory", {})
    tool = tmp_path / "gcc"
    tool.write_text("")
    assert tool_cache.cached_output(tool, ("--version",), lambda: "gcc 12") == "gcc 12"
