"""The per-target compile probe kept across runs (issue 21 item 4), against real compilers.

clang-22 compiles HIP device code for any gfx target with `-nogpuinc -nogpulib`; Debian's ROCm
5.2 hipcc compiles gfx1030, has no device library for gfx1100 and does not know gfx942. The
compiler each test runs is a small shell script placed as the compiler: it appends
`start <target>` / `end <target>` to a log and runs the real one, so a test sees exactly which
compiles started. The probe store is a folder of the test (the `cache_dir` fixture).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from rocmforge.probes import compile_probe_cache, probe_store
from rocmforge.probes.compile_probe import TargetProbe, compile_argv, probe_targets
from rocmforge.probes.compile_probe_cache import (
    compiler_chain,
    parse_depfile,
    parse_search_dirs,
)
from rocmforge.probes.elf_needed import needed_libraries, needed_names

CLANG22 = "/usr/bin/clang++-22"
BARE = ("-nogpulib", "-nogpuinc")
REPO = Path(__file__).resolve().parents[2]
needs_clang22 = pytest.mark.needs_tool("clang++-22", "clang-offload-bundler-22", "ld.lld-22")


def logging_compiler(folder: Path, real: str, *, name: str = "clang++",
                     sleep_s: float = 0.0) -> tuple[Path, Path]:
    """A script that logs each compile's target around a run of `real`; (script, log)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}.log"
    script = folder / name
    pause = f"sleep {sleep_s}\n" if sleep_s else ""
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --offload-arch=*) arch="${a#--offload-arch=}";; '
        "esac; done\n"
        f'echo "start $arch" >> {shlex.quote(str(log))}\n'
        f"{pause}"
        f'{shlex.quote(real)} "$@"\n'
        "code=$?\n"
        f'echo "end $arch" >> {shlex.quote(str(log))}\n'
        'exit "$code"\n')
    script.chmod(0o755)
    return script, log


def started(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines()
            if line.startswith("start ")]


def same_verdicts(first: tuple[TargetProbe, ...], second: tuple[TargetProbe, ...]) -> bool:
    """Equal but for when they were kept and the temporary folder in the argv."""
    def bare(probe: TargetProbe) -> TargetProbe:
        return dataclasses.replace(probe, cached_at="", argv=())
    return [bare(p) for p in first] == [bare(p) for p in second]


def probe_with_copied_device_libraries(
        tmp_path: Path, target: str) -> tuple[Callable[[], TargetProbe], Path, Path]:
    """A cached clang-22 probe of `target` against a copy of Debian's ROCm 5.2 device-library
    folder (it has gfx1030's, not gfx1100's): (probe, the folder, the compiler's log)."""
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22)
    bitcode = tmp_path / "bitcode"
    shutil.copytree("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", bitcode)
    # ROCm 5.2's libraries carry code object ABI 4 and 5; clang 22 defaults to 6.
    args = ("-nogpuinc", "-mcode-object-version=4")

    def probe() -> TargetProbe:
        return probe_targets([target], compiler=compiler, driver="clang", llvm_major=22,
                             device_lib_dir=bitcode, extra_args=args, use_cache=True)[0]

    return probe, bitcode, log


# --- pure parts ----------------------------------------------------------------------------------


def test_depfile_prerequisites_with_escapes() -> None:
    text = ("/tmp/x/probe_0.o: /tmp/x/probe.hip \\\n  /usr/include/a\\ b.h /opt/$$dir/c.h \\\n"
            "  rel/d.h\n")
    assert parse_depfile(text) == ("/tmp/x/probe.hip", "/usr/include/a b.h", "/opt/$dir/c.h",
                                   "rel/d.h")
    assert parse_depfile("") == ()


def test_search_list_from_cc1_v() -> None:
    output = ('clang -cc1 version 15.0.6 based upon LLVM 15.0.6 default target x86_64\n'
              'ignoring nonexistent directory "/usr/hsa/include"\n'
              'ignoring duplicate directory "/usr/include"\n'
              '#include "..." search starts here:\n'
              '#include <...> search starts here:\n'
              ' /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12\n'
              ' /usr/local/include\n'
              ' /usr/include\n'
              'End of search list.\n'
              'p.hip:1:2: error: boom\n')
    assert parse_search_dirs(output) == (
        "/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12",
        "/usr/local/include", "/usr/include", "/usr/hsa/include")


def test_the_gcc_install_a_search_folder_came_from() -> None:
    chosen = compile_probe_cache._chosen_install
    assert chosen("/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12") == [
        "/usr/bin/../lib/gcc", "/usr/bin/../lib/gcc/x86_64-linux-gnu",
        "/usr/bin/../lib/gcc/x86_64-linux-gnu/12"]
    assert chosen("/usr/include") == []


def test_the_argv_writes_dependencies_and_the_search_list_through_cc1() -> None:
    argv = compile_argv(Path("/usr/bin/clang++-22"), "gfx1100", Path("/t/probe.hip"),
                        Path("/t/probe_0.o"), driver="clang", extra_args=BARE,
                        depfile=Path("/t/probe_0.d"))
    assert argv == ["/usr/bin/clang++-22", "-x", "hip", "--offload-arch=gfx1100",
                    "--cuda-device-only", "-nogpulib", "-nogpuinc",
                    "-Xclang", "-dependency-file", "-Xclang", "/t/probe_0.d",
                    "-Xclang", "-MT", "-Xclang", "/t/probe_0.o",
                    "-Xclang", "-sys-header-deps", "-Xclang", "-v",
                    "-c", "/t/probe.hip", "-o", "/t/probe_0.o"]


def test_the_volatile_environment_is_left_out_of_the_key() -> None:
    env = {"PATH": "/usr/bin", "TERM": "xterm", "PWD": "/x", "ROCMFORGE_ARCH": "gfx90a",
           "PYTEST_CURRENT_TEST": "t", "PERL5LIB": "/p", "HIP_PLATFORM": "amd"}
    assert probe_store.compiler_environment(env) == {"PATH": "/usr/bin", "PERL5LIB": "/p",
                                                     "HIP_PLATFORM": "amd"}


# --- the chain -----------------------------------------------------------------------------------


@needs_clang22
def test_needed_libraries_of_the_real_clang_22() -> None:
    real = Path(os.path.realpath(CLANG22))
    names, runpath = needed_names(real)
    assert "libc.so.6" in names and any(n.startswith("libLLVM") for n in names)
    assert runpath == ("$ORIGIN/../lib",)
    found = needed_libraries(real, {})
    llvm = next(p for p in found if p.name.startswith("libLLVM"))
    assert llvm.is_file()
    assert needed_names(Path(__file__)) == ((), ())  # not ELF


@pytest.mark.needs_tool("hipcc")
def test_the_chain_of_debian_hipcc_names_perl_its_scripts_and_clang_15() -> None:
    chain = [str(p) for p in compiler_chain(
        Path("/usr/bin/hipcc"), "hipcc", rocm_root=Path("/usr"), llvm_major=15,
        environ={"ROCM_PATH": "/usr", "HIP_PATH": "/usr", "PATH": os.environ["PATH"]})]
    assert chain[:4] == ["/usr/bin/hipcc", "/usr/bin/perl", "/usr/bin/hipcc.pl",
                         "/usr/bin/hipvars.pm"]
    assert "/usr/bin/clang++-15" in chain
    assert "/usr/lib/llvm-15/bin/clang" in chain
    assert "/usr/lib/llvm-15/bin/clang-offload-bundler" in chain
    assert any(Path(p).name == "libLLVM-15.so.1" for p in chain)


# --- kept and reused -----------------------------------------------------------------------------


@pytest.mark.slow
@needs_clang22
def test_the_second_run_is_a_hit_and_starts_no_compiler(cache_dir: Path, tmp_path: Path) -> None:
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22)

    def probe(use_cache: bool = True) -> tuple[TargetProbe, ...]:
        return probe_targets(["gfx1100", "gfx90a"], compiler=compiler, driver="clang",
                             llvm_major=22, extra_args=BARE, use_cache=use_cache)

    first = probe()
    assert [(p.target, p.compiles, p.compile_reason, p.cached_at) for p in first] == [
        ("gfx1100", True, "clang++ compiled a kernel for gfx1100", ""),
        ("gfx90a", True, "clang++ compiled a kernel for gfx90a", "")]
    assert sorted(started(log)) == ["gfx1100", "gfx90a"]
    second = probe()
    assert sorted(started(log)) == ["gfx1100", "gfx90a"]  # no compiler started
    assert all(p.cached_at.endswith("Z") for p in second)
    assert same_verdicts(first, second)
    # --no-cache (use_cache=False): both compile again, nothing is read or written.
    before = probe_store.store_file().read_bytes()
    fresh = probe(use_cache=False)
    assert sorted(started(log)) == ["gfx1100", "gfx1100", "gfx90a", "gfx90a"]
    assert [p.cached_at for p in fresh] == ["", ""]
    assert probe_store.store_file().read_bytes() == before


@pytest.mark.slow
@needs_clang22
def test_a_changed_header_misses_even_with_its_mtime_restored(cache_dir: Path,
                                                              tmp_path: Path) -> None:
    """A header the compile reads, copied into an include folder of the test; a header put
    into a folder searched before it is found again (and here breaks the compile)."""
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22)
    include, shadow = tmp_path / "include", tmp_path / "shadow"
    include.mkdir()
    shadow.mkdir()
    header = include / "rocmforge_extra.h"
    shutil.copy(Path(os.path.realpath(CLANG22)).parent.parent / "lib/clang/22/include/stdint.h",
                header)
    args = (*BARE, "-isystem", str(shadow), "-isystem", str(include),
            "-include", "rocmforge_extra.h")

    def probe() -> TargetProbe:
        return probe_targets(["gfx1100"], compiler=compiler, driver="clang", llvm_major=22,
                             extra_args=args, use_cache=True)[0]

    assert (probe().compiles, len(started(log))) == (True, 1)
    assert (probe().cached_at != "", len(started(log))) == (True, 1)
    stat = header.stat()
    text = header.read_bytes()
    with header.open("r+b") as handle:  # in place, same size, the mtime put back
        handle.write(text.replace(b"Standard header", b"standard header", 1))
    os.utime(header, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    now = header.stat()
    assert header.read_bytes() != text
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (stat.st_size, stat.st_mtime_ns,
                                                          stat.st_ino)
    again = probe()
    assert (again.compiles, again.cached_at, len(started(log))) == (True, "", 2)
    assert (probe().cached_at != "", len(started(log))) == (True, 2)
    (shadow / "rocmforge_extra.h").write_text("#error the shadowing header was read\n")
    shadowed = probe()
    assert (shadowed.compiles, shadowed.cached_at, len(started(log))) == (False, "", 3)
    assert "the shadowing header was read" in shadowed.compile_reason


@pytest.mark.slow
@needs_clang22
@pytest.mark.needs_tool("hipcc")  # Debian's rocm-device-libs come with it
def test_a_touched_or_added_device_library_misses(cache_dir: Path, tmp_path: Path) -> None:
    probe, bitcode, log = probe_with_copied_device_libraries(tmp_path, "gfx1030")
    first = probe()
    assert (first.compiles, first.device_lib, len(started(log))) == (True, True, 1)
    assert "--rocm-device-lib-path=" + str(bitcode) in first.argv
    assert (probe().cached_at != "", len(started(log))) == (True, 1)
    ocml = bitcode / "ocml.bc"
    stat = ocml.stat()
    os.utime(ocml, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert (probe().cached_at, len(started(log))) == ("", 2)
    assert (probe().cached_at != "", len(started(log))) == (True, 2)
    (bitcode / "oclc_extra.bc").write_bytes((bitcode / "oclc_daz_opt_on.bc").read_bytes())
    assert (probe().cached_at, len(started(log))) == ("", 3)


@pytest.mark.slow
@needs_clang22
def test_a_rejected_target_is_kept_until_the_compiler_or_environment_changes(
        cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22)

    def probe(**env: str) -> TargetProbe:
        environ = {**os.environ, **env}
        return probe_targets(["gfx9999"], compiler=compiler, driver="clang", llvm_major=22,
                             extra_args=BARE, environ=environ, use_cache=True)[0]

    first = probe()
    assert (first.compiles, first.compile_reason) == (
        False, "this toolchain (LLVM 22) does not know gfx9999")
    kept = probe(TERM="dumb", PWD="/elsewhere")  # shell noise is not part of the key
    assert (kept.compiles, kept.compile_reason, len(started(log))) == (
        False, first.compile_reason, 1)
    assert kept.cached_at.endswith("Z")
    assert (probe(CPLUS_INCLUDE_PATH="/opt/x").cached_at, len(started(log))) == ("", 2)
    # The same script written again: a new inode and ctime, so another compiler as far as
    # anyone can tell.
    text = compiler.read_text()
    compiler.unlink()
    compiler.write_text(text)
    compiler.chmod(0o755)
    again = probe()
    assert (again.compiles, again.cached_at, len(started(log))) == (False, "", 3)
    assert probe().cached_at != "" and len(started(log)) == 3


@pytest.mark.slow
@needs_clang22
@pytest.mark.needs_tool("hipcc")  # Debian's rocm-device-libs come with it
def test_a_missing_device_library_is_kept_until_its_folder_changes(cache_dir: Path,
                                                                     tmp_path: Path) -> None:
    probe, bitcode, log = probe_with_copied_device_libraries(tmp_path, "gfx1100")
    first = probe()
    assert (first.compiles, first.compile_reason, first.cached_at) == (
        False, "this ROCm has no device library for gfx1100", "")
    kept = probe()
    assert (kept.compiles, kept.compile_reason, len(started(log))) == (
        False, first.compile_reason, 1)
    assert kept.cached_at.endswith("Z")
    # Any library added to the folder (here not even the missing one) is a miss.
    (bitcode / "oclc_extra.bc").write_bytes((bitcode / "oclc_daz_opt_on.bc").read_bytes())
    assert (probe().cached_at, len(started(log))) == ("", 2)
    assert (probe().cached_at != "", len(started(log))) == (True, 2)
    # The missing library itself, added: compiled again, and now it links.
    (bitcode / "oclc_isa_version_1100.bc").write_bytes(
        (bitcode / "oclc_isa_version_1030.bc").read_bytes())
    fixed = probe()
    assert (fixed.cached_at, len(started(log))) == ("", 3)
    assert fixed.compile_reason != first.compile_reason


@pytest.mark.slow
@needs_clang22
def test_a_failure_that_is_not_the_target_is_never_kept(cache_dir: Path, tmp_path: Path) -> None:
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22)
    bad = tmp_path / "bad.h"
    bad.write_text("#error not the target's fault\n")
    args = (*BARE, "-include", str(bad))
    for _ in range(2):
        probe = probe_targets(["gfx1100"], compiler=compiler, driver="clang", llvm_major=22,
                              extra_args=args, use_cache=True)[0]
        assert (probe.compiles, probe.cached_at) == (False, "")
        assert "not the target's fault" in probe.compile_reason
    assert started(log) == ["gfx1100", "gfx1100"]
    assert not probe_store.store_file().exists()


@pytest.mark.slow
@needs_clang22
def test_targets_compile_side_by_side_in_order_each_with_its_verdict(cache_dir: Path,
                                                                     tmp_path: Path) -> None:
    compiler, log = logging_compiler(tmp_path / "bin", CLANG22, sleep_s=0.5)
    targets = ["gfx1100", "gfx9999", "gfx90a", "gfx9998"]
    found = probe_targets(targets, compiler=compiler, driver="clang", llvm_major=22,
                          extra_args=BARE, max_parallel=2)
    assert [(p.target, p.compiles, p.compile_reason) for p in found] == [
        ("gfx1100", True, "clang++ compiled a kernel for gfx1100"),
        ("gfx9999", False, "this toolchain (LLVM 22) does not know gfx9999"),
        ("gfx90a", True, "clang++ compiled a kernel for gfx90a"),
        ("gfx9998", False, "this toolchain (LLVM 22) does not know gfx9998")]
    assert [p.argv[-1].rsplit("/", 1)[1] for p in found] == [
        "probe_0.o", "probe_1.o", "probe_2.o", "probe_3.o"]
    events = [line.split(" ")[0] for line in log.read_text().splitlines()]
    assert events[:2] == ["start", "start"]  # two compilers ran at once
    log.unlink()
    one_by_one = probe_targets(targets, compiler=compiler, driver="clang", llvm_major=22,
                               extra_args=BARE, max_parallel=1)
    assert same_verdicts(found, one_by_one)
    assert [line.split(" ")[0] for line in log.read_text().splitlines()] == ["start", "end"] * 4


# --- Debian's ROCm 5.2 -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_real_hipcc_keeps_a_compile_a_refusal_and_a_missing_device_library(
        cache_dir: Path, tmp_path: Path) -> None:
    compiler, log = logging_compiler(tmp_path / "bin", "/usr/bin/hipcc", name="hipcc")

    def probe() -> tuple[TargetProbe, ...]:
        return probe_targets(["gfx1030", "gfx1100", "gfx942"], compiler=compiler,
                             driver="hipcc", llvm_major=15, rocm_root=Path("/usr"),
                             device_lib_dir=Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"),
                             use_cache=True)

    first = probe()
    assert [(p.target, p.compiles, p.compile_reason) for p in first] == [
        ("gfx1030", True, "hipcc compiled a kernel for gfx1030"),
        ("gfx1100", False, "this ROCm has no device library for gfx1100"),
        ("gfx942", False, "this toolchain (LLVM 15) does not know gfx942")]
    assert sorted(started(log)) == ["gfx1030", "gfx1100", "gfx942"]
    second = probe()
    assert same_verdicts(first, second)
    assert [bool(p.cached_at) for p in second] == [True, True, True]
    # The fix comes from doctor's toolchain advice, fresh or kept (the driver's "cannot find
    # ROCm device library" is the target's verdict, not triage's "point clang at ROCm").
    assert [p.compile_fix for p in first] == [p.compile_fix for p in second] == ["", "", ""]
    assert sorted(started(log)) == ["gfx1030", "gfx1100", "gfx942"]


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_the_build_preflight_never_reads_the_probe_store(cache_dir: Path,
                                                         tmp_path: Path) -> None:
    """Doctor's kept verdict for gfx942 is altered in the store: doctor's probe shows the
    altered one (it reads the store), the build's preflight the compiler's own."""
    from rocmforge.plan.gather import prepare_build
    from rocmforge.probes.compile_probe import probe_install_targets
    from rocmforge.probes.rocm import find_rocm_installs
    from rocmforge.settings import defaults_from_config, resolve

    usr = next(i for i in find_rocm_installs(Path("/"), os.environ, python_paths=[])
               if i.root == Path("/usr"))
    real = "this toolchain (LLVM 15) does not know gfx942"
    assert probe_install_targets(usr, ["gfx942"], use_cache=True)[0].compile_reason == real
    entries = json.loads(probe_store.store_file().read_text())
    for entry in entries.values():
        entry["value"]["reason"] = "altered in the store"
    probe_store.store_file().write_text(json.dumps(entries))
    doctor_view = probe_install_targets(usr, ["gfx942"], use_cache=True)[0]
    assert doctor_view.compile_reason == "altered in the store"
    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={"arch": "gfx942", "work_dir": str(tmp_path / "work")})
    prepared = prepare_build(settings)
    row = next(r for r in prepared.preflight if r.check == "compile gfx942")
    assert (row.status, row.detail) == ("FAIL", real)


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_doctor_says_which_verdicts_came_from_the_store(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1", "ROCMFORGE_CACHE_DIR": str(tmp_path / "cache"),
           "ROCMFORGE_WORK_DIR": str(tmp_path / "work")}

    def doctor(*flags: str, **extra: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "invoke", "doctor", "--arch", "gfx942",
                               "--json", *flags], cwd=REPO, env={**env, **extra},
                              capture_output=True, text=True, timeout=300)
        assert "Traceback" not in done.stderr
        return json.loads(done.stdout)

    def verdict(doc: dict) -> tuple[str, str, str]:
        probe = doc["compile_probes"][0]
        row = next(r for r in doc["rows"] if r["check"] == "compile gfx942")
        return probe["reason"], probe["cached_at"], row["detail"]

    reason = "this toolchain (LLVM 15) does not know gfx942"
    assert verdict(doctor()) == (reason, "", reason)
    kept_reason, kept_at, detail = verdict(doctor())
    assert (kept_reason, kept_at.endswith("Z")) == (reason, True)
    assert detail == (f"{reason} (result cached {kept_at}; nothing it depends on changed "
                      "since; --no-cache compiles afresh)")
    assert verdict(doctor("--no-cache")) == (reason, "", reason)
    assert verdict(doctor(ROCMFORGE_PROBE_CACHE="0")) == (reason, "", reason)


@pytest.mark.slow
@pytest.mark.needs_tool("hipcc")
def test_doctor_inputs_are_those_of_the_serial_order(cache_dir: Path, tmp_path: Path) -> None:
    """doctor_facts starts the compile probes in the background of the PyTorch, components
    and features reads: what it returns is what one-after-the-other made."""
    from rocmforge.knowledge.arches import load_arch_table
    from rocmforge.knowledge.targets import requested_targets
    from rocmforge.plan.gather import component_report, doctor_facts
    from rocmforge.plan.prepare_features import features_for_build
    from rocmforge.plan.pytorch import pytorch_for
    from rocmforge.probes.facts import gather_facts, with_target_probes
    from rocmforge.settings import defaults_from_config, resolve
    from rocmforge.workdir import workdir_for

    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={"arch": "gfx942;gfx1100", "work_dir": str(tmp_path / "work")})
    found = doctor_facts(settings, os.environ)
    workdir = workdir_for(settings.work_dir)
    pytorch = pytorch_for(settings, workdir)
    facts = gather_facts(settings, environ=os.environ)
    components = component_report(facts, pytorch)
    targets = requested_targets(settings.arch, facts.gpus.targets, load_arch_table())
    features = features_for_build(settings, facts, [str(t) for t in targets], workdir, pytorch,
                                  components)
    probed = with_target_probes(facts, targets, environ=os.environ)
    assert found.targets == targets
    assert (found.pytorch, found.release) == (pytorch, pytorch.release)
    assert found.components == components
    assert found.features == features
    assert same_verdicts(found.facts.target_probes, probed.target_probes)
    assert [p.target for p in found.facts.target_probes] == ["gfx942", "gfx1100"]


@pytest.mark.needs_tool("hipcc")  # Debian's ROCm 5.2 is the install found
def test_the_install_is_handed_on_as_soon_as_it_is_chosen(tmp_path: Path) -> None:
    """gather_facts gives doctor the chosen ROCm install while the other probes still run (it
    starts the compiles there); a machine without one hands nothing on."""
    from rocmforge.probes.facts import gather_facts
    from rocmforge.settings import defaults_from_config, resolve

    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={"work_dir": str(tmp_path / "work")})
    handed: list[object] = []
    facts = gather_facts(settings, environ=os.environ, on_rocm=handed.append)
    assert facts.rocm is not None and handed == [facts.rocm]
    (tmp_path / "empty").mkdir()
    none: list[object] = []
    bare = gather_facts(settings, root=tmp_path / "empty", environ={"PATH": "/nonexistent"},
                        on_rocm=none.append)
    assert (bare.rocm, none) == (None, [])


def test_a_probe_error_comes_before_the_pytorch_sides(tmp_path: Path) -> None:
    """Both the ROCm path and the PyTorch ref are bad: doctor says what the serial order said
    first, the ROCm path, though the PyTorch side is read while the machine is probed."""
    from rocmforge.errors import ProbeError, UsageError
    from rocmforge.plan.gather import doctor_facts
    from rocmforge.settings import defaults_from_config, resolve

    flags = {"arch": "gfx1100", "work_dir": str(tmp_path / "work"), "pytorch_ref": "v1.2.3"}
    settings = resolve(defaults=defaults_from_config(), environ={}, flags=flags)
    with pytest.raises(UsageError, match="older than the kit supports"):
        doctor_facts(settings, os.environ)
    settings = resolve(defaults=defaults_from_config(), environ={},
                       flags={**flags, "rocm_path": str(tmp_path / "no-rocm")})
    with pytest.raises(ProbeError) as caught:
        doctor_facts(settings, os.environ)
    assert str(tmp_path / "no-rocm") in caught.value.paragraph()


def test_a_kept_missing_library_rests_on_every_bitcode_folder_of_the_layouts(
        tmp_path: Path) -> None:
    """The failure rests on the folder the compile was given and each folder an install's
    layouts may keep device bitcode in, present or not: a folder that appears (a ROCm 5 layout
    installed over a Debian one) is a miss, as is a library added to an existing one."""
    root = tmp_path / "rocm"
    debian = root / "lib" / "x86_64-linux-gnu" / "amdgcn" / "bitcode"
    debian.mkdir(parents=True)
    folders = compile_probe_cache.device_library_folders(debian, root)
    assert [(s.path, s.stamp is not None) for s in folders] == [
        (str(debian), True), (str(root / "amdgcn" / "bitcode"), False),
        (str(root / "lib" / "llvm" / "amdgcn" / "bitcode"), False),
        (str(root / "llvm" / "amdgcn" / "bitcode"), False)]
    reason = "this ROCm has no device library for gfx1100"

    def holds() -> bool:
        kept = probe_store.Stored(value=compile_probe_cache.failure_record(reason, folders),
                                  stored_at="2026-12-03T00:00:00Z")
        return compile_probe_cache.still_holds(kept) is not None

    assert holds()
    (root / "amdgcn" / "bitcode").mkdir(parents=True)
    assert not holds()
    folders = compile_probe_cache.device_library_folders(debian, root)
    assert holds()
    (debian / "oclc_isa_version_1100.bc").write_bytes(b"BC")
    assert not holds()
