"""Probe: can this toolchain really compile device code for each target, and does this ROCm have
the device library for it?

Owns: compiling a one-kernel HIP file device-only (`--offload-arch=T --cuda-device-only -c`) in a
temporary directory with `HIP_PLATFORM=amd`, the check that the device-library directory has
`oclc_isa_version_<NNN>.bc`, and turning the compiler's error into a one-line reason. This finds
in a second what a PyTorch build would find after an hour (reference rocm-arch-toolchain.md §6.2:
Debian's ROCm 5.2 rejects gfx942/gfx1151 as unknown and has no device library for gfx11xx).
Must not: write outside its temporary directory or decide what to build.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.probes import Runner, run_command

# Uses HIP's headers and blockIdx, so the device libraries are linked (as in a real build).
KERNEL_WITH_HEADERS = """\
#include <hip/hip_runtime.h>
__global__ void rocmforge_probe(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }
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


def explain_compile_failure(output: str, target: str, llvm_major: int) -> str:
    """One line a user can act on, from the compiler's stderr."""
    processor = processor_of(target)
    llvm = f"LLVM {llvm_major}" if llvm_major else "its LLVM"
    if re.search(
        r"invalid target ID|unsupported HIP gpu architecture|unknown target CPU|"
        r"not a recognized processor|invalid offload arch",
        output,
    ):
        if re.search(r"invalid target ID '[^']*:", output) and ":" in target:
            return f"this toolchain ({llvm}) rejects the target ID {target} (feature not supported)"
        return f"this toolchain ({llvm}) does not know {processor}"
    if "cannot find ROCm device library" in output:
        return f"this ROCm has no device library for {processor}"
    if "hip/hip_runtime.h" in output and "not found" in output:
        return "the HIP headers were not found (hip/hip_runtime.h)"
    first_error = next(
        (line.strip() for line in output.splitlines() if "error" in line.lower()),
        output.strip().splitlines()[0] if output.strip() else "",
    )
    return first_error[:300] or "the compiler failed without a message"


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
) -> list[str]:
    """The exact command: hipcc takes the .hip file as HIP; clang needs `-x hip` and the ROCm
    root (and the device-lib dir, which Debian keeps outside `<root>/amdgcn`)."""
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
        "-c",
        str(source),
        "-o",
        str(output),
    ]
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
) -> tuple[TargetProbe, ...]:
    """Compile the probe kernel once per target (separately, so one bad target does not hide
    the others) and check each target's device library."""
    bare = "-nogpuinc" in extra_args
    env = {k: v for k, v in environ.items() if k not in ("HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH")}
    env["HIP_PLATFORM"] = "amd"
    if rocm_root is not None:
        env["ROCM_PATH"] = str(rocm_root)
        env["HIP_PATH"] = str(rocm_root)
    results = []
    with tempfile.TemporaryDirectory(prefix="rocmforge-probe-") as tmp:
        source = Path(tmp) / "probe.hip"
        source.write_text(KERNEL_BARE if bare else KERNEL_WITH_HEADERS)
        for index, target in enumerate(targets):
            output = Path(tmp) / f"probe_{index}.o"
            argv = compile_argv(
                compiler,
                target,
                source,
                output,
                driver=driver,
                rocm_root=rocm_root,
                device_lib_dir=device_lib_dir,
                extra_args=extra_args,
            )
            result = run(argv, env=env, cwd=tmp, timeout=120.0)
            ok = result.returncode == 0 and output.is_file()
            reason = (
                f"{Path(argv[0]).name} compiled a kernel for {target}"
                if ok
                else explain_compile_failure(result.output, target, llvm_major)
            )
            if "-nogpulib" in extra_args:
                lib_ok: bool | None = None
                lib_reason = "not checked (-nogpulib)"
            else:
                lib_ok, lib_reason = check_device_lib(target, device_lib_dir)
            results.append(
                TargetProbe(
                    target=target,
                    compiles=ok,
                    compile_reason=reason,
                    device_lib=lib_ok,
                    device_lib_reason=lib_reason,
                    argv=tuple(argv),
                )
            )
    return tuple(results)


def probe_install_targets(
    install,
    targets: Sequence[str],
    *,
    environ: Mapping[str, str] = os.environ,
    run: Runner = run_command,
) -> tuple[TargetProbe, ...]:
    """Probe with a RocmInstall's own driver: hipcc when it has one (it knows the device-lib
    layout), else its clang++. Returns () when the install has neither."""
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
        environ=environ,
        run=run,
    )
