"""The probe store (results of expensive probes kept across runs) and the per-process memo of
tool `--version` answers.

The store's keys are checked on real files; the shared-cache HIP trial is run for real: a copy
of clang-22 (with its linker, bundler and resource dir beside it) and a copy of sccache in a
temp dir, so touching or replacing one of them is a real tool change.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rocmforge import process
from rocmforge.plan.cache_rows import HIP_CHECK, shared_cache_rows
from rocmforge.probes import probe_store, tool_cache
from rocmforge.probes.cache import CacheSession, probe_shared_cache
from rocmforge.probes.system import gather_system, tool_version


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


# --- the key and the store --------------------------------------------------------------------


def test_key_changes_with_each_file_text_and_variable(tmp_path: Path) -> None:
    tool = tmp_path / "clang"
    tool.write_bytes(b"\x7fELF one")

    def key(**env: str) -> str:
        return probe_store.probe_key("k/1", files=[tool], texts=["src"], env=env)

    first = key(PATH="/usr/bin")
    assert key(PATH="/usr/bin") == first
    assert key(PATH="/bin") != first
    assert probe_store.probe_key("k/1", files=[tool], texts=["src2"], env={"PATH": "/usr/bin"}) \
        != first
    _bump_mtime(tool)
    touched = key(PATH="/usr/bin")
    assert touched != first
    replacement = tmp_path / "clang.new"
    replacement.write_bytes(b"\x7fELF one")
    stat = tool.stat()
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    replacement.replace(tool)  # same size, same mtime: only the inode differs
    assert key(PATH="/usr/bin") not in (first, touched)
    tool.unlink()
    assert probe_store.file_identity(tool) == f"{tool}|missing"


def test_a_symlink_is_keyed_by_the_file_it_names(tmp_path: Path) -> None:
    real = tmp_path / "clang-22"
    real.write_bytes(b"x")
    link = tmp_path / "clang++"
    link.symlink_to(real.name)
    stat = real.stat()
    assert probe_store.file_identity(link) == (
        f"{real}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}|{stat.st_ino}")


def test_store_keeps_values_with_their_time_and_drops_the_oldest(
        cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert probe_store.lookup("a") is None
    probe_store.store("a", {"answer": 1})
    kept = probe_store.lookup("a")
    assert kept is not None and kept.value == {"answer": 1}
    assert len(kept.stored_at) == len("2026-12-03T13:44:08Z") and kept.stored_at.endswith("Z")
    assert probe_store.store_file() == cache_dir / probe_store.STORE_NAME
    monkeypatch.setattr(probe_store, "MAX_ENTRIES", 2)
    entries = json.loads(probe_store.store_file().read_text())
    entries["old"] = {"value": {"answer": 0}, "stored_at": "2001-09-09T01:46:40Z"}
    probe_store.store_file().write_text(json.dumps(entries))
    probe_store.store("c", {"answer": 3})
    # Three entries, two kept: the one stored in 2001 goes.
    assert probe_store.lookup("old") is None
    assert probe_store.lookup("c") is not None and probe_store.lookup("a") is not None


def test_a_broken_store_is_an_empty_one(cache_dir: Path) -> None:
    cache_dir.mkdir(parents=True)
    probe_store.store_file().write_text("{not json")
    assert probe_store.lookup("a") is None
    probe_store.store("a", {"answer": 1})
    assert probe_store.lookup("a") is not None


@pytest.mark.parametrize(("value", "on"), [("0", False), ("off", False), ("no", False),
                                           ("1", True), ("", True)])
def test_the_switch(value: str, on: bool) -> None:
    assert probe_store.enabled({probe_store.DISABLE_ENV: value}) is on
    assert probe_store.enabled({}) is True


# --- the shared-cache HIP trial, for real -------------------------------------------------------


def _toolchain(folder: Path, real_sccache: str) -> tuple[Path, Path]:
    """A copy of clang-22 (clang++ a link to it; lld, the bundler and lib/ linked beside it)
    and a copy of sccache: (sccache, clang++)."""
    real = Path(shutil.which("clang-22") or "").resolve()
    bin_dir = folder / "llvm" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy2(real, bin_dir / "clang")
    (bin_dir / "clang++").symlink_to("clang")
    for name in ("ld.lld", "lld", "clang-offload-bundler"):
        (bin_dir / name).symlink_to(real.parent / name)
    (folder / "llvm" / "lib").symlink_to(real.parent.parent / "lib")
    sccache = folder / "sccache"
    shutil.copy2(Path(real_sccache).resolve(), sccache)
    return sccache, bin_dir / "clang++"


def _real_sccache() -> str:
    """The sccache binary (not a wrapper script such as pyenv's shim)."""
    from rocmforge.probes.shims import resolve_shim

    found = shutil.which("sccache") or ""
    return resolve_shim(found) if found else found


@pytest.mark.slow
@pytest.mark.needs_tool("sccache", "clang-22")
def test_hip_trial_is_kept_until_a_tool_changes(
        tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sccache, clangxx = _toolchain(tmp_path / "tools", _real_sccache())
    compiles: list[tuple[str, ...]] = []
    original = CacheSession.compile

    def counted(self: CacheSession, argv, *, cwd):  # type: ignore[no-untyped-def]
        compiles.append(tuple(argv))
        return original(self, argv, cwd=cwd)

    monkeypatch.setattr(CacheSession, "compile", counted)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCCACHE_")}

    def probe(use_cache: bool = True):  # type: ignore[no-untyped-def]
        found = probe_shared_cache({"CMAKE_CXX_COMPILER_LAUNCHER": str(sccache)}, remote=None,
                                   hip_compiler=str(clangxx), hip_target="gfx1100",
                                   environ=environ, use_cache=use_cache)
        assert found is not None and found.hip_trial is not None
        return found

    fresh = probe()
    assert len(compiles) == 1 and fresh.cached_at == ""
    assert fresh.hip_trial.compiled and fresh.hip_trial.counters.misses == 1
    again = probe()
    assert len(compiles) == 1, "the unchanged toolchain must not compile again"
    assert again.cached_at and again.hip_trial == fresh.hip_trial
    assert again.tool == fresh.tool
    row = shared_cache_rows(again)[0]
    assert row.check == HIP_CHECK
    assert f"(test compile result cached {again.cached_at};" in row.detail
    assert "--no-cache compiles afresh" in row.detail
    assert shared_cache_rows(fresh)[0].detail in row.detail

    # --no-cache: runs, and does not read the store.
    probe(use_cache=False)
    assert len(compiles) == 2
    # The compiler's real file touched: compiled again, then kept under the new key.
    _bump_mtime(tmp_path / "tools" / "llvm" / "bin" / "clang")
    assert probe().cached_at == "" and len(compiles) == 3
    assert probe().cached_at != "" and len(compiles) == 3
    # The compiler replaced by a fresh copy (a new inode).
    copy = tmp_path / "clang.new"
    shutil.copy2(tmp_path / "tools" / "llvm" / "bin" / "clang", copy)
    copy.replace(tmp_path / "tools" / "llvm" / "bin" / "clang")
    assert probe().cached_at == "" and len(compiles) == 4
    # The cache tool replaced.
    shutil.copy2(sccache, tmp_path / "sccache.new")
    (tmp_path / "sccache.new").replace(sccache)
    assert probe().cached_at == "" and len(compiles) == 5
    # The linker beside the compiler changed (here: pointed at another copy).
    lld = tmp_path / "tools" / "llvm" / "bin" / "ld.lld"
    target = lld.resolve()
    lld.unlink()
    shutil.copy2(target, tmp_path / "ld.lld")
    lld.symlink_to(tmp_path / "ld.lld")
    assert probe().cached_at == "" and len(compiles) == 6
    # A variable of the compile's environment changed.
    environ["CPATH"] = str(tmp_path / "include")
    assert probe().cached_at == "" and len(compiles) == 7
    assert probe().cached_at != "" and len(compiles) == 7


@pytest.mark.needs_tool("sccache", "clang-22")
def test_a_failed_trial_is_not_kept(tmp_path: Path, cache_dir: Path) -> None:
    real = _real_sccache()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SCCACHE_")}
    for _ in range(2):
        found = probe_shared_cache({"CMAKE_CXX_COMPILER_LAUNCHER": real}, remote=None,
                                   hip_compiler=str(tmp_path / "no-such-clang++"),
                                   hip_target="gfx1100", environ=environ, use_cache=True)
        assert found is not None and found.hip_trial is not None
        assert not found.hip_trial.compiled and found.cached_at == ""
    assert probe_store._load() == {}


# --- tool --version: once per process and tool file ---------------------------------------------


@pytest.mark.needs_tool("cmake", "ninja")
def test_cmake_and_ninja_are_asked_once(
        tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[tuple[str, ...]] = []
    original = process.run

    def counted(argv, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(tuple(argv))
        return original(argv, **kwargs)

    monkeypatch.setattr(process, "run", counted)
    path_env = os.environ["PATH"]
    first = [gather_system(work_dir=tmp_path, environ={"PATH": path_env}) for _ in range(2)]
    asked = [argv for argv in runs if argv[1:] == ("--version",)]
    cmake, ninja = shutil.which("cmake", path=path_env), shutil.which("ninja", path=path_env)
    assert sorted(asked) == sorted([(cmake, "--version"), (ninja, "--version")])
    assert first[0].cmake == first[1].cmake and first[0].cmake.version.count(".") >= 1
    # A new process (empty memory) reads the answer from the tool cache; a changed tool file is
    # asked again.
    monkeypatch.setattr(tool_cache, "_memory", {})
    copy = tmp_path / "bin" / "ninja"
    copy.parent.mkdir()
    shutil.copy2(str(ninja), copy)
    assert tool_version("ninja", str(copy.parent)).version == first[0].ninja.version
    assert tool_version("ninja", str(copy.parent)).version == first[0].ninja.version
    assert runs.count((str(copy), "--version")) == 1
    _bump_mtime(copy)
    assert tool_version("ninja", str(copy.parent)).version == first[0].ninja.version
    assert runs.count((str(copy), "--version")) == 2
