"""The GPU driver under ROCm: the amdgpu kernel module DKMS builds, the KFD interface the
runtime and its tools read (/dev/kfd, /sys/class/kfd), and WSL's stand-in for it (the DXG thunk
library ROCr loads, and that thunk's queries of Windows' adapters).

Owns: this family's parsers, rules that read values out of a line or decline where the line
alone does not prove the cause. Must not: read files, run programs or pick between findings
(the engine does). The user-space install (tools, roots, CMake files) is rocm_install.py's;
/dev/kfd permissions are a signature in config/diagnostics.toml.
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# The thunk libraries ROCr loads this way (libdtif.so, renamed librocdxg.so); another library in
# the same wording counts only where rocminfo said it runs on WSL.
_THUNK = re.compile(r"^lib(?:dtif|rocdxg)\.so")


def _wsl_thunk_library(match: re.Match[str], view: LineView) -> Reading | None:
    library = match.group("lib")
    if not _THUNK.match(library) and not any("WSL environment detected" in line
                                             for line in view.previous):
        return None  # another program's dlopen wrapper: the loader's own rule reads the line
    return Reading(
        subject=library,
        cause=f"the ROCm runtime (ROCr) runs on WSL through the DXG thunk library {library}, "
              "which it opens by its bare name, and the dynamic loader did not find it: the "
              "WSL ROCm package that ships it is missing, or it is installed but not on the "
              "loader path (ldconfig's cache not refreshed after the install, or a venv's "
              "bundled ROCm runtime that does not search /opt/rocm/lib)",
        fix=f"install the WSL ROCm packages that ship {library} (AMD's WSL install guide), "
            "then run `sudo ldconfig`; or put its folder on the loader path for this shell: "
            "`export LD_LIBRARY_PATH=/opt/rocm/lib:$LD_LIBRARY_PATH`, and run rocminfo again")


_DKMS_FAILED = re.compile(r"Bad return status for module build on kernel: (?P<kernel>\S+)")


def _amdgpu_dkms_build(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("mod") != "amdgpu":
        return None  # another vendor's module (nvidia, a wifi driver): not ROCm's driver
    failed = next((f for f in map(_DKMS_FAILED.search, reversed(view.previous)) if f), None)
    if failed is None:
        return None  # the make.log named alone (dkms status, a pasted path) proves nothing
    kernel = failed.group("kernel")
    return Reading(
        subject="amdgpu-dkms",
        cause=f"DKMS could not build the amdgpu kernel module {match.group('ver')} (the "
              f"amdgpu-dkms package of the ROCm install) for kernel {kernel}: that driver "
              "release does not compile against this kernel's headers (a kernel newer than "
              "the release supports, or a distribution kernel with backported API changes), "
              "so the ROCm driver is not installed for it",
        fix=f"read {match.group('log')} for the first error; install an amdgpu-dkms release "
            f"that supports kernel {kernel} (a newer amdgpu-install, after removing the old "
            "packages), or boot a kernel from ROCm's supported-OS list; with a recent "
            "kernel, its in-tree amdgpu driver may do: `amdgpu-install --usecase=rocm "
            "--no-dkms`")


def _kfd_topology_fatal(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="/sys/class/kfd",
        cause=f"rocprofiler-sdk found no GPU topology ({match.group('path')} does not exist: "
              "no amdgpu kernel driver (KFD) on this machine, such as a CPU-only runner or a "
              "container started without the GPU) and aborted the process: its CI build "
              "(ROCPROFILER_CI) makes this check fatal, where a release build only warns",
        fix="run it on a machine with the amdgpu driver loaded (/dev/kfd and /sys/class/kfd "
            "present; in a container pass --device=/dev/kfd --device=/dev/dri), or use a "
            "rocprofiler-sdk built without ROCPROFILER_BUILD_CI, which goes on without "
            "agents")


def _wsl_adapter_query(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="WSL",
        cause="the ROCm runtime's WSL thunk asked Windows (D3DKMT) about each display adapter "
              "and its AMD-specific query failed on one of them, so it aborted: AMD found the "
              "machines that hit it all had a second, non-AMD GPU (an NVIDIA card) next to "
              "the Radeon, which the thunk enumerates too",
        fix="disable the other vendor's GPU in Windows' Device Manager (or remove it) and run "
            "rocminfo again in a new WSL session, or install a newer WSL ROCm release whose "
            "thunk skips non-AMD adapters")


_NO_MODULE_LIST = re.compile(r"could not open /proc/modules|could not get list of modules")


def _amdgpu_not_loaded(match: re.Match[str], view: LineView) -> Reading | None:
    if match.group("state") == "live":
        state = ("is loaded but its /sys/module/amdgpu/initstate does not say 'live' (it "
                 "failed or has not finished initialising)")
    else:
        state = "is not loaded in this kernel (no /sys/module/amdgpu)"
    tool = "rocm-smi" if match.group("smi") else "rocminfo"
    if not match.group("smi") and any(_NO_MODULE_LIST.search(line) for line in view.previous):
        # rocminfo 5.x reads the module list through libkmod: without /proc/modules its
        # 'NOT loaded' says nothing about the driver
        return Reading(
            subject="/proc/modules",
            cause="rocminfo could not read the kernel's list of loaded modules (libkmod found "
                  "no /proc/modules), so it reported the amdgpu module as not loaded without "
                  "knowing: this process does not see the kernel's /proc (a sandbox such as "
                  "gVisor, or a chroot without /proc mounted); whether amdgpu is loaded on "
                  "the host is not shown",
            fix="run rocminfo where /proc is the kernel's: on the host, or in a container "
                "started with the GPU devices (--device=/dev/kfd --device=/dev/dri) and a "
                "normal runtime, or mount /proc in the chroot (`mount -t proc proc /proc`)")
    return Reading(
        subject="amdgpu",
        cause=f"{tool} checked the GPU kernel driver before asking for devices: the amdgpu "
              f"module {state}, so there is no KFD (/dev/kfd) for the ROCm runtime and no "
              "GPU can be found; in a container this is the host's kernel",
        fix="on the host, `sudo modprobe amdgpu` and read `sudo dmesg | grep -i amdgpu` for "
            "why it did not load (an unsigned DKMS module under Secure Boot, nomodeset or a "
            "blacklist on the kernel command line, a firmware file missing); install the "
            "driver with `amdgpu-install --usecase=rocm` (or the distribution's "
            "linux-firmware and kernel) if it is absent, then reboot and run rocminfo again")


def _asic_not_in_kfd(match: re.Match[str], view: LineView) -> Reading | None:
    asic = match.group("asic")
    return Reading(
        subject=asic.lower(),
        cause=f"the amdgpu kernel driver says the GPU ({asic}) is not supported in KFD, the "
              "compute part of the driver that /dev/kfd and the whole ROCm runtime go through: "
              "this GPU generation has no ROCm compute support, so rocminfo, HIP and a "
              "PyTorch ROCm build cannot use it; groups and permissions do not change that",
        fix="use a GPU that ROCm supports, or a backend that does not need ROCm on this one "
            "(Vulkan or OpenCL through Mesa, or the CPU)")


def _kfd_missing(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="/dev/kfd",
        cause="rocminfo found the amdgpu kernel module loaded, but this system's /dev has no "
              "kfd device node, the ROCm runtime's way to the GPU: the process runs in a "
              "container started without the GPU's device files, or the kernel's amdgpu "
              "was built without KFD support (CONFIG_HSA_AMD)",
        fix="start the container with `docker run --device=/dev/kfd --device=/dev/dri "
            "--group-add video ...` (podman the same; Kubernetes: the AMD GPU device "
            "plugin); on the host, `ls -l /dev/kfd` and, if it is missing, use a kernel "
            "with CONFIG_HSA_AMD=y (the distribution's generic kernel or amdgpu-dkms)")


RULES: tuple[Rule, ...] = (
    Rule(id="wsl-thunk-library-missing", klass="rocm-install", tier=0,
         triggers=(", failed:",),
         pattern=rx(r"^Cannot load (?P<lib>lib[\w.+-]+\.so[\w.]*), failed:"),
         read=_wsl_thunk_library, source="ROCm/rocm-systems@1b1610fc2b2ab32af71e6e04e4d4a6a4ae"
         "597992:projects/rocr-runtime/runtime/hsa-runtime/core/runtime/thunk_loader.cpp "
         "(ThunkLoader: dlopen of the WSL thunk library, then fprintf 'Cannot load %s, "
         "failed:%s' with dlerror(); libdtif.so there, librocdxg.so in later releases: "
         "TheRock@89553ce3:build_tools/packaging/python/templates/rocm/src/rocm_sdk/"
         "_dist_info.py, 'rocdxg'); ROCm/librocdxg#46"),
    Rule(id="amdgpu-dkms-build", klass="rocm-install",
         triggers=("/build/make.log",),
         pattern=rx(r"Consult (?P<log>\S*/(?P<mod>[\w.-]+)/(?P<ver>[^/\s]+)/build/make\.log) "
                     r"for more information"),
         read=_amdgpu_dkms_build, source="dell/dkms@793fdab5eba9d6b6e9295b18e44a23824e7da44f:"
         "dkms.in (report_build_problem 10 'Bad return status for module build on kernel: "
         "$kernelver ($arch)', then 'Consult $build_log for more information.', build_log "
         "in $dkms_tree/$module/$module_version/build); ROCm/legacy-rocm-build#5111"),
    Rule(id="rocprofiler-kfd-topology-fatal", klass="rocm-install",
         triggers=("does not exist",),
         pattern=rx(r"^F\d{4}(?:\d{4})? [\d:.]+ +\d+ agent\.cpp:\d+\] sysfs nodes path "
                     r"'(?P<path>/sys/class/kfd\S*)' does not exist"),
         read=_kfd_topology_fatal, source="ROCm/rocm-systems@1b1610fc2b2ab32af71e6e04e4d4a6a4"
         "ae597992:projects/rocprofiler-sdk/source/lib/rocprofiler-sdk/agent.cpp (read_topology:"
         " ROCP_CI_LOG(WARNING) 'sysfs nodes path {} does not exist') and source/lib/common/"
         "logging.hpp (ROCP_CI_LOG is FATAL under ROCPROFILER_CI); glog's 'F[yyyy]<mmdd> <time> "
         "<tid> <file>:<line>]' prefix; ROCm/TheRock#4176"),
    Rule(id="wsl-thunk-adapter-query", klass="rocm-install",
         triggers=("QueryAdapterInfo",),
         pattern=rx(r"thunk_proxy::QueryAdapterInfo\(.*Assertion .ret == STATUS_SUCCESS' "
                     r"failed"),
         read=_wsl_adapter_query, source="the WSL libhsakmt's assertion (its path "
         "sources/wsl/libhsakmt/src/thunk_proxy/thunk_proxy.cpp is in the message; the "
         "source is not public); ROCm/legacy-rocm-build#4460 (AMD: every affected machine "
         "also had an NVIDIA adapter), #4584"),
    Rule(id="amdgpu-driver-not-loaded", klass="rocm-install",
         triggers=("ROCk module is NOT", "(amdgpu not found in modules)"),
         pattern=rx(r"ROCk module is NOT (?P<state>loaded|live), possibly no GPU devices"
                     r"|(?P<smi>Driver not initialized) \(amdgpu not found in modules\)"),
         # a build script that runs rocminfo and goes on: the later error is the failure
         unless=rx(r"\berror: |\bFAILED: |CMake Error|\*\*\* \[|^ninja: build stopped"),
         read=_amdgpu_not_loaded, source="ROCm/rocm-systems@1b1610fc2b2ab32af71e6e04e4d4a6a4ae"
         "597992:projects/rocminfo/rocminfo.cc (CheckInitialState: 'ROCk module is NOT live' "
         "when /sys/module/amdgpu/initstate lacks 'live', 'NOT loaded' when /sys/module/amdgpu "
         "cannot be opened; skipped on WSL) and projects/rocm-smi-lib/python_smi_tools/"
         "rocm_smi.py (driverInitialized, then 'Driver not initialized (amdgpu not found in "
         "modules)'); the real rocminfo 5.2.3 here (make/devrt6.sh)"),
    Rule(id="asic-not-supported-in-kfd", klass="gpu-target",
         triggers=("not supported in kfd",),
         pattern=rx(r"amdgpu: (?P<asic>[A-Z][A-Z0-9_]+)\s+(?:VF\s+)?not supported in kfd"),
         read=_asic_not_in_kfd, source="the Linux amdgpu driver's KFD probe (kernel log "
         "'kfd kfd: amdgpu: <ASIC name> <VF or empty> not supported in kfd'; the kernel's "
         "amdkfd/kfd_device.c not read here: unverified), as logged in "
         "ROCm/legacy-rocm-build#2232"),
    Rule(id="kfd-device-missing", klass="rocm-install",
         triggers=("Unable to open /dev/kfd read-write: No such file",),
         pattern=rx(r"Unable to open /dev/kfd read-write: No such file or directory"),
         read=_kfd_missing, source="ROCm/rocm-systems@1b1610fc2b2ab32af71e6e04e4d4a6a4ae597992"
         ":projects/rocminfo/rocminfo.cc (CheckInitialState: the amdgpu module check passes "
         "first, then open('/dev/kfd', O_RDWR) fails and 'Unable to open /dev/kfd read-write: "
         "%s' prints strerror(errno): ENOENT is the node missing)"),
)
