"""Probe: can this toolchain really compile device code for each target, and does this ROCm have
the device library for it?

Owns: compiling a one-kernel HIP file device-only (`--offload-arch=T --cuda-device-only -c`) in a
temporary directory with `HIP_PLATFORM=amd`, one compiler per target at once (up to the CPU
count), the check that the device-library directory has `oclc_isa_version_<NNN>.bc`, and turning
the compiler's error into a one-line reason. This finds in a second what a PyTorch build would
find after an hour (reference rocm-arch-toolchain.md §6.2: Debian's ROCm 5.2 rejects
gfx942/gfx1151 as unknown and has no device library for gfx11xx). With `use_cache` (doctor) a
verdict comes from the probe store when nothing that decides it changed
(rocmforge.probes.compile_probe_cache says what that is); the build's preflight always compiles.
Must not: write outside its temporary directory and the probe store, or decide what to build.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocmforge.probes import Runner, run_command

if TYPE_CHECKING:
    from rocmforge.probes.compile_probe_cache import KeptCompile, PathStamp
    from rocmforge.probes.rocm import RocmInstall

# Uses HIP's headers and blockIdx, so the device libraries are linked (as in a real build), and
# the host C++ library in device code as PyTorch's kernels do (std::array's subscript, std::min,
# <cmath>): a libstdc++ whose assertions call host-only functions from those templates
# (-D_GLIBCXX_ASSERTIONS, GCC 15), or missing libstdc++ headers for the GCC the compiler picks,
# fail here as they would fail the build.
KERNEL_WITH_HEADERS = """\
#include <hip/hip_runtime.h>
#include <algorithm>
#include <array>
#include <cmath>
__global__ void rocmforge_probe(float* x) {
  std::array<float, 2> pair{1.0f, 2.0f};
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  x[i] = std::min(pair[i & 1], std::fabs(x[i]));
}
"""
# For `-nogpuinc -nogpulib`: no HIP headers, no device library; builtins only.
KERNEL_BARE = """\
__attribute__((global)) void rocmforge_probe(float* x) {
  x[__builtin_amdgcn_workitem_id_x()] += 1.0f;
}
"""


@dataclass(frozen=True, kw_only=True)
class TargetProbe:
    """The verdict for one target: compile (True/False) and device library (True/False/None when
    not applicable, e.g. generic targets or `-nogpulib`), each with its reason."""

    target: str
    compiles: bool
    compile_reason: str
    device_lib: bool | None
    device_lib_reason: str
    argv: tuple[str, ...]
    # When the compile verdict came from the probe store (UTC, ISO 8601); "" when it ran now.
    cached_at: str = ""
    # The fix triage gives for a failure that is not the target's (the host C++ library, a
    # shadowing header); "" otherwise (doctor then advises a toolchain for the target).
    compile_fix: str = ""


def processor_of(target: str) -> str:
    """`gfx90a:xnack-` -> `gfx90a`."""
    return target.split(":", 1)[0]


def device_lib_name(target: str) -> str:
    """`oclc_isa_version_90a.bc` for gfx90a, `..._1100.bc` for gfx1100; "" for generic targets,
    which have no per-ISA bitcode of that name (reference §7.2, unverified)."""
    processor = processor_of(target)
    if "generic" in processor or not processor.startswith("gfx"):
        return ""
    return f"oclc_isa_version_{processor[3:]}.bc"


def check_device_lib(target: str, device_lib_dir: Path | None) -> tuple[bool | None, str]:
    name = device_lib_name(target)
    if not name:
        return None, f"{target} is a generic target; there is no per-ISA device library to check"
    if device_lib_dir is None:
        return False, "no device-library directory (amdgcn/bitcode) was found in this ROCm"
    if (device_lib_dir / name).is_file():
        return True, f"{device_lib_dir / name}"
    return (
        False,
        f"this ROCm has no device library for {processor_of(target)} ({name} is missing "
        f"from {device_lib_dir})",
    )


# The driver refusing the target itself (its own list of processors and features decides).
_TARGET_REJECTED = re.compile(
    r"invalid target ID|unsupported HIP gpu architecture|unknown target CPU|"
    r"not a recognized processor|invalid offload arch"
)


def rejects_target(output: str) -> bool:
    """Whether the compiler's output says it does not know the target (or its features): a
    verdict of the driver's binaries alone, which the compile probe's key names."""
    return _TARGET_REJECTED.search(output) is not None


_NO_DEVICE_LIBRARY = "cannot find ROCm device library"


def lacks_device_library(output: str) -> bool:
    """Whether the driver stopped because the target's device library is not where it looks:
    a verdict of the driver's binaries (the key) and of the folders a library would be added
    to (`compile_probe_cache.device_library_folders`)."""
    return _NO_DEVICE_LIBRARY in output


def explain_compile_failure(output: str, target: str, llvm_major: int) -> str:
    """One line a user can act on, from the compiler's stderr."""
    processor = processor_of(target)
    llvm = f"LLVM {llvm_major}" if llvm_major else "its LLVM"
    if rejects_target(output):
        if re.search(r"invalid target ID '[^']*:", output) and ":" in target:
            return f"this toolchain ({llvm}) rejects the target ID {target} (feature not supported)"
        return f"this toolchain ({llvm}) does not know {processor}"
    if lacks_device_library(output):
        return f"this ROCm has no device library for {processor}"
    if "hip/hip_runtime.h" in output and "not found" in output:
        return "the HIP headers were not found (hip/hip_runtime.h)"
    explained = _triage_reason(output)
    if explained:
        return explained
    first_error = next(
        (line.strip() for line in output.splitlines() if "error" in line.lower()),
        output.strip().splitlines()[0] if output.strip() else "",
    )
    return first_error[:300] or "the compiler failed without a message"


def _triaged(output: str) -> tuple[str, str]:
    """(cause, fix) of the build-log triage for a failed probe compile (a host libstdc++ whose
    assertions reach device code, missing libstdc++ headers, a CUDA thrust), or ('', ''). The
    same engine explains the build's own compile failures, so doctor and the build agree; a
    target the toolchain does not know is this module's own verdict."""
    from rocmforge.triage import explain_text

    found = explain_text(output, "compilers")
    if found.klass is None or found.klass == "gpu-target":
        return "", ""
    return found.cause, found.fix


def compile_failure_fix(output: str) -> str:
    """The fix for a failed probe compile that is not the target's (see `_triaged`), or ''.
    A target the toolchain rejects and a device library the driver does not find are the
    target's own verdicts: '' here, as for the same verdict read back from the probe store, so
    doctor advises the same toolchain whether the compile ran now or was kept."""
    if rejects_target(output) or lacks_device_library(output):
        return ""
    return _triaged(output)[1]


def _triage_reason(output: str) -> str:
    return _triaged(output)[0]


# The user's flags that reach PyTorch's HIP compiles and change what the host headers put into
# device code: macro definitions and undefinitions only (distributions' default CXXFLAGS carry
# -D_GLIBCXX_ASSERTIONS, which makes libstdc++ templates call a host-only assertion function
# from __host__ __device__ code; tests/failures/cases/real-libstdcxx-assertions-device.log).
HOST_FLAG_VARIABLES = ("CPPFLAGS", "CXXFLAGS", "HIPFLAGS")
# The C++ standard of the probe: PyTorch's own floor since 2.1 (CMAKE_CXX_STANDARD 17); the
# standard decides which libstdc++ templates (and their assertions) device code instantiates.
PROBE_STD = "-std=c++17"


def host_macro_flags(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The macro definitions and undefinitions of CPPFLAGS, CXXFLAGS and HIPFLAGS, in that
    order, as -D/-U words: `-DNAME`, `-D NAME` and the preprocessor list distributions use,
    `-Wp,-D_FORTIFY_SOURCE=2,-D_GLIBCXX_ASSERTIONS` (unsplittable text is skipped: the build
    would stop on it with its own message)."""
    import shlex

    words: list[str] = []
    for name in HOST_FLAG_VARIABLES:
        try:
            split = shlex.split(environ.get(name, ""))
        except ValueError:
            continue
        for index, word in enumerate(split):
            if word in ("-D", "-U") and index + 1 < len(split):
                words.append(word + split[index + 1])
            elif word.startswith(("-D", "-U")) and len(word) > 2:
                words.append(word)
            elif word.startswith("-Wp,"):
                words += [w for w in word.split(",")[1:] if w.startswith(("-D", "-U"))
                          and len(w) > 2]
    return tuple(words)


def compile_argv(
    compiler: Path,
    target: str,
    source: Path,
    output: Path,
    *,
    driver: str,
    rocm_root: Path | None = None,
    device_lib_dir: Path | None = None,
    extra_args: Sequence[str] = (),
    depfile: Path | None = None,
) -> list[str]:
    """The exact command: hipcc takes the .hip file as HIP; clang needs `-x hip` and the ROCm
    root (and the device-lib dir, which Debian keeps outside `<root>/amdgcn`). `depfile`: the
    device compile also writes the files it read there, with system headers, and prints its
    header search list (`-v`). Both are said to clang -cc1 directly (`-Xclang`): the driver's
    `-MD -MF` write nothing in a `--cuda-device-only` compile of clang 22 (it warns "argument
    unused")."""
    argv = [str(compiler)]
    if driver == "clang":
        argv += ["-x", "hip"]
        if rocm_root is not None and "-nogpuinc" not in extra_args:
            argv.append(f"--rocm-path={rocm_root}")
        if device_lib_dir is not None and "-nogpulib" not in extra_args:
            argv.append(f"--rocm-device-lib-path={device_lib_dir}")
    argv += [
        f"--offload-arch={target}",
        "--cuda-device-only",
        *extra_args,
    ]
    if depfile is not None:
        for word in ("-dependency-file", str(depfile), "-MT", str(output), "-sys-header-deps",
                     "-v"):
            argv += ["-Xclang", word]
    argv += ["-c", str(source), "-o", str(output)]
    return argv


def probe_targets(
    targets: Sequence[str],
    *,
    compiler: Path,
    driver: str,
    llvm_major: int = 0,
    rocm_root: Path | None = None,
    device_lib_dir: Path | None = None,
    extra_args: Sequence[str] = (),
    environ: Mapping[str, str] = os.environ,
    run: Runner = run_command,
    use_cache: bool = False,
    max_parallel: int = 0,
) -> tuple[TargetProbe, ...]:
    """Compile the probe kernel once per target (separately, so one bad target does not hide
    the others; up to `max_parallel` at once, default the CPU count) and check each target's
    device library. Results are in the order of `targets`.

    `use_cache`: a verdict kept in the probe store is used when nothing it rests on changed
    (compile_probe_cache.still_holds); a compile that worked is kept with the files it read, a
    failure only when the driver refused the target itself (`rejects_target`) or found no
    device library for it (`lacks_device_library`, kept with the folders one would be added
    to)."""
    bare = "-nogpuinc" in extra_args
    no_lib = "-nogpulib" in extra_args
    source_text = KERNEL_BARE if bare else KERNEL_WITH_HEADERS
    env = {k: v for k, v in environ.items() if k not in ("HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH")}
    env["HIP_PLATFORM"] = "amd"
    if rocm_root is not None:
        env["ROCM_PATH"] = str(rocm_root)
        env["HIP_PATH"] = str(rocm_root)
    lib_dir_read = None if no_lib else device_lib_dir
    with tempfile.TemporaryDirectory(prefix="rocmforge-probe-") as tmp:
        scratch = Path(tmp)
        source = scratch / "probe.hip"
        source.write_text(source_text)
        argvs = [
            compile_argv(
                compiler,
                target,
                source,
                scratch / f"probe_{index}.o",
                driver=driver,
                rocm_root=rocm_root,
                device_lib_dir=device_lib_dir,
                extra_args=extra_args,
                depfile=scratch / f"probe_{index}.d",
            )
            for index, target in enumerate(targets)
        ]
        keys: list[str] = []
        kept: dict[int, KeptCompile] = {}
        if use_cache:
            keys, kept = _kept_verdicts(targets, argvs, scratch=scratch, source=source_text,
                                        env=env, compiler=compiler, driver=driver,
                                        rocm_root=rocm_root, llvm_major=llvm_major,
                                        device_lib_dir=device_lib_dir)
        fresh = [index for index in range(len(targets)) if index not in kept]

        def compile_one(index: int) -> _Compiled:
            return _compile(targets[index], argvs[index], env=env, scratch=scratch,
                            output=scratch / f"probe_{index}.o",
                            depfile=scratch / f"probe_{index}.d", llvm_major=llvm_major,
                            run=run, record=use_cache, lib_dir_read=lib_dir_read,
                            rocm_root=rocm_root)

        workers = max(1, min(len(fresh), max_parallel or os.cpu_count() or 1))
        if len(fresh) > 1 and workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                compiled = dict(zip(fresh, pool.map(compile_one, fresh), strict=True))
        else:
            compiled = {index: compile_one(index) for index in fresh}
    results = []
    to_store: dict[str, dict[str, object]] = {}
    for index, target in enumerate(targets):
        if no_lib:
            lib_ok: bool | None = None
            lib_reason = "not checked (-nogpulib)"
        else:
            lib_ok, lib_reason = check_device_lib(target, device_lib_dir)
        hit = kept.get(index)
        if hit is not None:
            ok, reason, cached_at = hit.compiles, hit.reason, hit.stored_at
            fix = ""
        else:
            done = compiled[index]
            ok, reason, cached_at = done.ok, done.reason, ""
            fix = done.fix
            if use_cache and done.record is not None:
                to_store[keys[index]] = done.record
        results.append(
            TargetProbe(
                target=target,
                compiles=ok,
                compile_reason=reason,
                device_lib=lib_ok,
                device_lib_reason=lib_reason,
                argv=tuple(argvs[index]),
                cached_at=cached_at,
                compile_fix=fix,
            )
        )
    if to_store:
        from rocmforge.probes import probe_store

        probe_store.store_many(to_store)
    return tuple(results)


@dataclass(frozen=True, kw_only=True)
class _Compiled:
    """One compile that ran: its verdict and, when it may be kept, the record to keep."""

    ok: bool
    reason: str
    record: dict[str, object] | None = None
    fix: str = ""


def _compile(target: str, argv: Sequence[str], *, env: Mapping[str, str], scratch: Path,
             output: Path, depfile: Path, llvm_major: int, run: Runner, record: bool,
             lib_dir_read: Path | None, rocm_root: Path | None) -> _Compiled:
    result = run(argv, env=env, cwd=scratch, timeout=120.0)
    ok = result.returncode == 0 and output.is_file()
    if ok:
        reason = f"{Path(argv[0]).name} compiled a kernel for {target}"
    else:
        reason = explain_compile_failure(result.output, target, llvm_major)
    fix = "" if ok else compile_failure_fix(result.output)
    if not record:
        return _Compiled(ok=ok, reason=reason, fix=fix)
    from rocmforge.probes import compile_probe_cache as stored_compiles

    if ok:
        stamps: tuple[PathStamp, ...] | None = stored_compiles.compile_record(
            depfile, result.output, cwd=scratch, device_lib_dir=lib_dir_read)
        if stamps is None:  # what it read is unknown: nothing to prove a later hit with
            return _Compiled(ok=ok, reason=reason)
        return _Compiled(ok=ok, reason=reason,
                         record=stored_compiles.success_record(reason, stamps))
    if result.returncode in (124, 126, 127):  # timed out, or the driver did not start
        return _Compiled(ok=ok, reason=reason)
    if rejects_target(result.output):
        return _Compiled(ok=ok, reason=reason, record=stored_compiles.failure_record(reason))
    if lacks_device_library(result.output):
        folders = stored_compiles.device_library_folders(lib_dir_read, rocm_root)
        return _Compiled(ok=ok, reason=reason,
                         record=stored_compiles.failure_record(reason, folders))
    return _Compiled(ok=ok, reason=reason, fix=fix)


def _kept_verdicts(targets: Sequence[str], argvs: Sequence[Sequence[str]], *, scratch: Path,
                   source: str, env: Mapping[str, str], compiler: Path, driver: str,
                   rocm_root: Path | None, llvm_major: int, device_lib_dir: Path | None
                   ) -> tuple[list[str], dict[int, KeptCompile]]:
    """Each target's key, and the kept verdicts that still hold (by target index)."""
    from rocmforge.probes import compile_probe_cache as stored_compiles
    from rocmforge.probes import probe_store

    chain = stored_compiles.compiler_chain(compiler, driver, rocm_root=rocm_root,
                                           llvm_major=llvm_major, environ=env)
    keys = []
    for target, argv in zip(targets, argvs, strict=True):
        name = device_lib_name(target)
        lib = device_lib_dir / name if device_lib_dir is not None and name else None
        keys.append(stored_compiles.compile_key(argv, scratch=scratch, source=source, env=env,
                                                chain=chain, device_lib=lib))
    stored = probe_store.lookup_many(keys)
    holding: dict[int, KeptCompile] = {}
    for index, key in enumerate(keys):
        if key in stored:
            verdict = stored_compiles.still_holds(stored[key])
            if verdict is not None:
                holding[index] = verdict
    return keys, holding


def probe_install_targets(
    install: RocmInstall,
    targets: Sequence[str],
    *,
    environ: Mapping[str, str] = os.environ,
    run: Runner = run_command,
    use_cache: bool = False,
) -> tuple[TargetProbe, ...]:
    """Probe with a RocmInstall's own driver: hipcc when it has one (it knows the device-lib
    layout), else its clang++. Returns () when the install has neither. The macros of the
    user's CPPFLAGS/CXXFLAGS/HIPFLAGS go into the compile, as they go into the build's.
    `use_cache`: see probe_targets (doctor: yes; the build's preflight: never)."""
    if install.hipcc is not None:
        compiler, driver = install.hipcc, "hipcc"
    elif install.clang is not None:
        compiler, driver = install.clang, "clang"
    else:
        return ()
    return probe_targets(
        targets,
        compiler=compiler,
        driver=driver,
        llvm_major=install.llvm_major,
        rocm_root=install.root,
        device_lib_dir=install.device_lib_dir,
        extra_args=(PROBE_STD, *host_macro_flags(environ)),
        environ=environ,
        run=run,
        use_cache=use_cache,
    )
