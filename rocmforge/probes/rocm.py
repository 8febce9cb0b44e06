"""Probe: which ROCm installs exist, what version and LLVM each has, and which one the build uses.

Owns: finding installs (every `/opt/rocm*`, `ROCM_PATH`, `HIP_PATH`, the distro layout under
`/usr`, a pip-installed ROCm SDK), reading their version (`.info/version*`, `hip_version.h`,
`hipcc --version`) and its HIP version apart from it (`hip_version.h`, `hipcc --version`,
`hipconfig --version`: from ROCm 10 HIP is numbered on its own, 10.0 ships HIP 7.15),
locating hipcc, the ROCm clang and the device-library directory, and choosing one
(`select_rocm`). Must not: write anything or decide whether a version is good enough (that is
`rocmforge.plan.doctor` with the knowledge tables). The filesystem root, the environment, the Python
search path and the program runner are parameters so tests can point them at fake trees.

Layouts (reference rocm-arch-toolchain.md §3.4, §3.5, §6.1):
- classic `/opt/rocm-X.Y.Z`: `bin/hipcc`, `.info/version`, LLVM in `llvm/` (5.x) or `lib/llvm/`
  (6.x+), device bitcode in `amdgcn/bitcode` or `lib/llvm/amdgcn/bitcode`;
- Debian: everything under `/usr`, hipcc drives `clang++-15`, device bitcode in
  `/usr/lib/<triplet>/amdgcn/bitcode`, no `.info/version` (the version comes from hip_version.h);
- TheRock releases: one tree per stream under /opt/rocm (core-7.14, core-10.0, core).
- TheRock pip SDK: the tree sits inside the `_rocm_sdk_core` (or `_rocm_sdk_devel`) package with
  its compiler in `lib/llvm/bin` (the package directory names are unverified upstream).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import ProbeError
from rocmforge.probes import Runner, run_command
from rocmforge.probes.compilers import parse_clang_version
from rocmforge.probes.tool_cache import cached_output
from rocmforge.versions import dotted_version, major_of, version_key

# "HIP version: 5.2.21153-0" (hipcc --version); "Debian clang version 15.0.6", "AMD clang version
# 19.0.0git" (the clang line hipcc --version prints after it).
_HIPCC_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)")
_INSTALLED_DIR = re.compile(r"^InstalledDir:\s*(\S.*)$", re.MULTILINE)
_HIP_VERSION_DEFINE = re.compile(r"#define\s+HIP_VERSION_(MAJOR|MINOR|PATCH)\s+(\d+)")
# "HIP version: 7.15.26333-0000000" (hipcc --version, hipconfig --full); "5.2.21153-0" alone
# (hipconfig --version). The build suffix after '-' is a hash, not part of the version.
_HIP_VERSION_LINE = re.compile(
    r"^(?:HIP version:\s*)?(\d+\.\d+(?:\.\d+)?)(?:[-+][0-9A-Za-z.]*)?\s*$", re.MULTILINE)
# Package directories a pip-installed TheRock SDK puts on sys.path (unverified upstream names).
PIP_SDK_PACKAGES = ("_rocm_sdk_core", "_rocm_sdk_devel")
# The command TheRock's pip SDK installs (`rocm-sdk path --root`, `version`, `targets`).
SDK_CLI = "rocm-sdk"
# Where every layout installs HIP's version header (classic, TheRock, Debian /usr, the SDK tree).
HIP_VERSION_HEADER = "include/hip/hip_version.h"


@dataclass(frozen=True, kw_only=True)
class RocmInstall:
    """One ROCm tree on this machine and what the build needs from it."""

    root: Path
    # "6.4.1"; "5.2" when only HIP's major.minor is known (hip_version.h); "" when unknown.
    version: str
    # How it was found: "/opt/rocm*", "ROCM_PATH", "HIP_PATH", "distro /usr", "pip rocm-sdk",
    # "--rocm-path".
    source: str
    # Where the version came from: ".info/version-rocm", ".info/version", "hip_version.h",
    # "hipcc --version", or "".
    version_source: str = ""
    hipcc: Path | None = None
    # The ROCm clang++ (or the one its hipcc drives); None when not found.
    clang: Path | None = None
    llvm_major: int = 0
    device_lib_dir: Path | None = None
    # True when `hipcc` on PATH is this install's hipcc.
    hipcc_on_path: bool = False
    # Where the LLVM major came from: "lib/llvm/lib/clang/<N>", "hipcc --version", "" (unknown).
    llvm_source: str = ""
    # The kind of tree (`install_layout`): "legacy /opt/rocm-X.Y", "TheRock /opt/rocm/core-X.Y",
    # "distro /usr", "pip SDK", "other".
    layout: str = ""
    # The processors this install can compile device code for: the per-ISA device libraries in
    # device_lib_dir (oclc_isa_version_<N>.bc), or what `rocm-sdk targets` says of a pip SDK.
    targets: tuple[str, ...] = ()
    targets_source: str = ""
    # HIP's own version, "major.minor.patch" ("7.15.26333"; the patch is HIP's build number).
    # It carried ROCm's major.minor up to 7.x; from ROCm 10 it does not (10.0 ships HIP 7.15).
    # PyTorch's aotriton.cmake picks the AOTriton runtime by HIP_VERSION_MAJOR.MINOR, and
    # torch.version.hip is this number. "" when the install does not say.
    hip_version: str = ""
    # Where it came from: "<root>/include/hip/hip_version.h", "hipcc --version",
    # "hipconfig --version", or "".
    hip_version_source: str = ""

    @property
    def label(self) -> str:
        version = self.version or "unknown version"
        return f"ROCm {version} at {self.root}"


# --- pure parsers ---------------------------------------------------------------------------


def parse_version_file(text: str) -> str:
    """`.info/version` holds "6.4.0-15396" or "7.10.1"; keep the dotted release only."""
    return dotted_version(text, at_start=True)


def parse_hip_version_header(text: str) -> str:
    """HIP_VERSION_MAJOR/MINOR from hip_version.h. HIP's PATCH is a build number, not ROCm's patch
    release, so only "major.minor" is returned (HIP 5.2.21153 ships with ROCm 5.2.x)."""
    found = dict(_HIP_VERSION_DEFINE.findall(text))
    if "MAJOR" in found and "MINOR" in found:
        return f"{int(found['MAJOR'])}.{int(found['MINOR'])}"
    return ""


def parse_hip_version_full(text: str) -> str:
    """HIP_VERSION_MAJOR.MINOR.PATCH from hip_version.h ("5.2.21153"); "major.minor" when the
    header has no PATCH; "" when it has neither MAJOR nor MINOR."""
    found = dict(_HIP_VERSION_DEFINE.findall(text))
    if "MAJOR" not in found or "MINOR" not in found:
        return ""
    head = f"{int(found['MAJOR'])}.{int(found['MINOR'])}"
    return f"{head}.{int(found['PATCH'])}" if "PATCH" in found else head


def parse_hip_version_output(text: str) -> str:
    """The HIP version `hipcc --version` ("HIP version: 7.15.26333-0000000") or `hipconfig
    --version` ("5.2.21153-0") prints, without its build hash: "7.15.26333"."""
    found = _HIP_VERSION_LINE.search(text)
    return found.group(1) if found else ""


@dataclass(frozen=True, kw_only=True)
class HipccReport:
    """What `hipcc --version` says: HIP major.minor, clang major, and clang's InstalledDir."""

    hip_version: str
    llvm_major: int
    installed_dir: str
    hip_full: str = ""  # "7.15.26333": the whole HIP version, build hash dropped


def parse_hipcc_version(text: str) -> HipccReport:
    hip = _HIPCC_HIP_VERSION.search(text)
    clang = parse_clang_version(text)
    installed = _INSTALLED_DIR.search(text)
    return HipccReport(
        hip_version=f"{hip.group(1)}.{hip.group(2)}" if hip else "",
        llvm_major=major_of(clang) if clang else 0,
        installed_dir=installed.group(1).strip() if installed else "",
        hip_full=parse_hip_version_output(text) if hip else "",
    )


_ISA_BITCODE = re.compile(r"^oclc_isa_version_([0-9a-f]+)\.bc$")
_SDK_TARGET = re.compile(r"\bgfx[0-9a-z]+(?:-[0-9a-z]+)*\b")


def targets_of_device_libs(names: Iterable[str]) -> tuple[str, ...]:
    """`oclc_isa_version_90a.bc` -> gfx90a, `..._1100.bc` -> gfx1100; sorted as the arch table
    sorts them (by number, then suffix), each once."""
    found = {f"gfx{m.group(1)}" for name in names if (m := _ISA_BITCODE.match(name))}
    return tuple(sorted(found, key=_processor_key))


def parse_sdk_targets(text: str) -> tuple[str, ...]:
    """The targets `rocm-sdk targets` prints (one line, separated by ';', ',' or spaces)."""
    return tuple(dict.fromkeys(_SDK_TARGET.findall(text)))


def _processor_key(name: str) -> tuple[int, int, int, str]:
    """gfx<major><minor><stepping>: the last two characters are hex digits (gfx90a = 9.0.10)."""
    digits = re.match(r"gfx(\d+)([0-9a-f])([0-9a-f])$", name)
    if not digits:
        return (0, 0, 0, name)
    return (int(digits.group(1)), int(digits.group(2), 16), int(digits.group(3), 16), name)


_LEGACY_DIR = re.compile(r"^rocm-\d+\.\d+")
_THEROCK_DIR = re.compile(r"^core(-\d+\.\d+)?$")


def install_layout(root: Path, source: str) -> str:
    """The kind of tree, from where it sits: a pip SDK package, the distro's /usr, one of
    TheRock's streams under /opt/rocm (core, core-7.14, core-10.0), a versioned /opt/rocm-X.Y.Z
    (or the /opt/rocm link to one), else "other"."""
    if source == "pip rocm-sdk" or root.name in PIP_SDK_PACKAGES:
        return "pip SDK"
    real = root.resolve()
    if source == "distro /usr" or real == Path("/usr"):
        return "distro /usr"
    for path in (root, real):
        if _THEROCK_DIR.match(path.name) and path.parent.name == "rocm":
            return f"TheRock {path.parent}/{path.name}"
    for path in (real, root):
        if _LEGACY_DIR.match(path.name) or path.name == "rocm":
            return f"legacy {path}"
    return "other"


# --- probes ---------------------------------------------------------------------------------


def looks_like_rocm(path: Path) -> bool:
    """A directory is a ROCm tree when it has any of the files every layout ships."""
    markers = (
        "bin/hipcc",
        ".info/version",
        ".info/version-rocm",
        "include/hip/hip_version.h",
        "lib/llvm/bin/clang",
        "llvm/bin/clang",
    )
    return path.is_dir() and any((path / m).exists() for m in markers)


def find_rocm_installs(
    root: Path = Path("/"),
    environ: Mapping[str, str] = os.environ,
    *,
    requested: str = "",
    python_paths: Sequence[str] | None = None,
    run: Runner = run_command,
    sdk_cli: Path | None = None,
) -> tuple[RocmInstall, ...]:
    """Every ROCm tree found, each once (by real path), in the order: --rocm-path, ROCM_PATH,
    HIP_PATH, /opt/rocm*, /usr, pip SDK. `root` prefixes the fixed locations only; paths from the
    environment or flags are taken as given. `sdk_cli` is a pip SDK's `rocm-sdk` to ask first
    (the build venv's, when the rocm_sdk setting is on); else the one on PATH is asked."""
    candidates: list[tuple[Path, str]] = []
    if requested:
        candidates.append((Path(requested), "--rocm-path"))
    if environ.get("ROCM_PATH"):
        candidates.append((Path(environ["ROCM_PATH"]), "ROCM_PATH"))
    if environ.get("HIP_PATH"):
        candidates.append((hip_path_root(Path(environ["HIP_PATH"])), "HIP_PATH"))
    opt = root / "opt"
    if opt.is_dir():
        for entry in sorted(opt.glob("rocm*")):
            candidates.append((entry, "/opt/rocm*"))
            # TheRock's releases install each stream beside the others: /opt/rocm/core-7.14,
            # /opt/rocm/core-10.0 (and /opt/rocm/core); each is a whole ROCm tree.
            if entry.is_dir() and not looks_like_rocm(entry):
                candidates += [(core, "/opt/rocm*") for core in sorted(entry.glob("core*"))
                               if core.is_dir()]
    candidates.append((root / "usr", "distro /usr"))
    # A pip SDK says where it is: `rocm-sdk path --root` of the rocm-sdk on PATH.
    if sdk_cli is None:
        sdk_cli_path = shutil.which(SDK_CLI, path=environ.get("PATH", ""))
        sdk_cli = Path(sdk_cli_path) if sdk_cli_path else None
    sdk_root = read_sdk_cli(sdk_cli, run).root if sdk_cli is not None else ""
    if sdk_root:
        candidates.append((Path(sdk_root), "pip rocm-sdk"))
    for site in python_paths if python_paths is not None else sys.path:
        for name in PIP_SDK_PACKAGES:
            if site:
                candidates.append((Path(site) / name, "pip rocm-sdk"))

    hipcc_path = shutil.which("hipcc", path=environ.get("PATH", ""))
    hipcc_real = Path(hipcc_path).resolve() if hipcc_path else None

    seen: set[Path] = set()
    installs: list[RocmInstall] = []
    for path, source in candidates:
        if not looks_like_rocm(path):
            continue
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        own_cli = sdk_cli if sdk_root and real == Path(sdk_root).resolve() else None
        installs.append(describe_install(path, source=source, hipcc_real=hipcc_real, run=run,
                                         sdk_cli=own_cli))
    return tuple(installs)


def hip_path_root(hip_path: Path) -> Path:
    """HIP_PATH is the ROCm root on ROCm >= 6 and `<root>/hip` before (reference §3.5)."""
    if hip_path.name == "hip" and looks_like_rocm(hip_path.parent):
        return hip_path.parent
    return hip_path


def describe_install(
    path: Path, *, source: str, hipcc_real: Path | None = None, run: Runner = run_command,
    sdk_cli: Path | None = None,
) -> RocmInstall:
    """Read one tree's version, compilers and device libraries."""
    version, version_source = "", ""
    for name in (".info/version-rocm", ".info/version"):
        text = _read(path / name)
        if text and parse_version_file(text):
            version, version_source = parse_version_file(text), name
            break
    header = _read(path / HIP_VERSION_HEADER)
    hip_version = parse_hip_version_full(header) if header else ""
    hip_source = str(path / HIP_VERSION_HEADER) if hip_version else ""
    if not version and hip_version:
        version, version_source = parse_hip_version_header(header), "hip_version.h"

    hipcc = path / "bin" / "hipcc"
    hipcc_found = hipcc if hipcc.exists() else None
    clang, llvm_major, llvm_source = _rocm_clang(path)
    if hipcc_found is not None and (llvm_major == 0 or not version or not hip_version):
        report = _hipcc_report(hipcc_found, path, run)
        if not version and report.hip_version:
            version, version_source = report.hip_version, "hipcc --version"
        if not hip_version and report.hip_full:
            hip_version, hip_source = report.hip_full, "hipcc --version"
        if llvm_major == 0 and report.llvm_major:
            llvm_major, llvm_source = report.llvm_major, "hipcc --version"
            clang = (
                _clang_in(Path(report.installed_dir), llvm_major) if report.installed_dir else None
            )
    hipconfig = path / "bin" / "hipconfig"
    if not hip_version and hipconfig.exists():
        hip_version = parse_hip_version_output(
            run([str(hipconfig), "--version"], env=_tool_env(path)).output or "")
        hip_source = "hipconfig --version" if hip_version else ""
    device_lib_dir = _device_lib_dir(path)
    targets: tuple[str, ...] = ()
    targets_source = ""
    if device_lib_dir is not None:
        targets = targets_of_device_libs(p.name for p in device_lib_dir.glob("oclc_isa_version_*"))
        targets_source = f"{device_lib_dir}/oclc_isa_version_*.bc"
    if sdk_cli is not None:
        sdk = read_sdk_cli(sdk_cli, run)
        if sdk.version:
            version, version_source = sdk.version, f"{sdk_cli.name} version"
        if sdk.targets:
            targets, targets_source = sdk.targets, f"{sdk_cli.name} targets"
    return RocmInstall(
        root=path,
        version=version,
        source=source,
        version_source=version_source,
        hipcc=hipcc_found,
        clang=clang,
        llvm_major=llvm_major,
        device_lib_dir=device_lib_dir,
        hipcc_on_path=bool(hipcc_found and hipcc_real and hipcc_found.resolve() == hipcc_real),
        llvm_source=llvm_source,
        layout=install_layout(path, source),
        targets=targets,
        targets_source=targets_source,
        hip_version=hip_version,
        hip_version_source=hip_source,
    )


@dataclass(frozen=True, kw_only=True)
class SdkReport:
    """What a pip ROCm SDK's `rocm-sdk` command says of itself ("" / () where it said nothing)."""

    root: str
    version: str
    targets: tuple[str, ...]


def read_sdk_cli(cli: Path, run: Runner = run_command) -> SdkReport:
    """`rocm-sdk path --root`, `rocm-sdk version` and `rocm-sdk targets` (TheRock's pip SDK)."""

    def ask(*args: str) -> str:
        result = run([str(cli), *args])
        return result.output.strip() if result.returncode == 0 else ""

    root = ask("path", "--root").splitlines()
    return SdkReport(root=root[-1].strip() if root else "",
                     version=sdk_version(ask("version")),
                     targets=parse_sdk_targets(ask("targets")))


_PEP440 = re.compile(r"\b\d+(?:\.\d+)+(?:(?:a|b|rc|\.dev|\.post)\d+)*(?:\+[\w.]+)?")


def sdk_version(text: str) -> str:
    """The release `rocm-sdk version` prints, pre-release and all ("7.14.1", "7.10.0a20251021":
    the nightlies' versions must compare equal to the pinned one)."""
    found = _PEP440.search(text)
    return found.group() if found else dotted_version(text)


def _hipcc_report(hipcc: Path, root: Path, run: Runner) -> HipccReport:
    """`hipcc --version`, asked once per hipcc file (rocmforge.probes.tool_cache).

    Only the real runner's answers are cached; tests pass their own runner and are asked fresh.
    """

    def ask() -> str:
        return run([str(hipcc), "--version"], env=_tool_env(root)).output

    output = cached_output(hipcc, ("--version", str(root)), ask) if run is run_command else ask()
    return parse_hipcc_version(output or "")


def _tool_env(root: Path) -> dict[str, str]:
    """Environment for running an install's own tools: pinned to that install and to AMD (a CUDA
    toolkit on the machine otherwise makes Debian's hipcc pick nvcc, reference §3.5)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("HIP_CLANG_PATH", "HIP_DEVICE_LIB_PATH")
    }
    env.update({"HIP_PLATFORM": "amd", "ROCM_PATH": str(root), "HIP_PATH": str(root)})
    return env


def _rocm_clang(root: Path) -> tuple[Path | None, int, str]:
    """The install's own LLVM (6.x+ `lib/llvm`, 5.x `llvm`); its major from the resource dir
    (`lib/clang/<N>`), with that folder as the source."""
    for llvm in (root / "lib" / "llvm", root / "llvm"):
        clang = llvm / "bin" / "clang++"
        if not clang.exists():
            continue
        majors = {
            int(m.group(1)): d
            for d in (llvm / "lib" / "clang").glob("*")
            if (m := re.match(r"(\d+)", d.name))
        }
        if not majors:
            return clang, 0, ""
        best = max(majors)
        return clang, best, str(majors[best].relative_to(root))
    return None, 0, ""


def _clang_in(directory: Path, major: int) -> Path | None:
    """hipcc's clang: Debian installs only `clang++-15`, others a plain `clang++`."""
    for name in (f"clang++-{major}", "clang++"):
        if (directory / name).exists():
            return directory / name
    return None


def device_lib_candidates(root: Path) -> tuple[Path, ...]:
    """The folders of an install that may hold its device bitcode, in the order they are tried
    (ROCm 5 `amdgcn/bitcode`, TheRock `lib/llvm/amdgcn/bitcode`, Debian
    `lib/<triplet>/amdgcn/bitcode`, the last only where such a folder exists)."""
    fixed = (
        root / "amdgcn" / "bitcode",
        root / "lib" / "llvm" / "amdgcn" / "bitcode",
        root / "llvm" / "amdgcn" / "bitcode",
    )
    try:  # lib/<triplet>: os.scandir, as a pathlib glob over /usr/lib costs ~10 ms
        with os.scandir(root / "lib") as entries:
            triplets = sorted(e.name for e in entries if e.is_dir() and e.name[0] != ".")
    except OSError:
        triplets = []
    found = [root / "lib" / t / "amdgcn" / "bitcode" for t in triplets]
    return (*fixed, *(f for f in found if f.is_dir()))


def _device_lib_dir(root: Path) -> Path | None:
    """Where `oclc_isa_version_*.bc` live: the first of `device_lib_candidates` with one."""
    for candidate in device_lib_candidates(root):
        if candidate.is_dir() and any(candidate.glob("oclc_isa_version_*.bc")):
            return candidate
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


# --- choosing -------------------------------------------------------------------------------


def select_rocm(
    installs: Iterable[RocmInstall], requested_path: str, environ: Mapping[str, str]
) -> RocmInstall:
    """The install the build uses: --rocm-path, then ROCM_PATH, then HIP_PATH, then the newest
    /opt/rocm* (the /opt/rocm link first), then /usr, then a pip SDK.

    A --rocm-path or ROCM_PATH that does not exist or is not ROCm is bad input (ProbeError, exit
    2): PyTorch's LoadHIP would also refuse it (pytorch-rocm-build.md §5.6)."""
    installs = tuple(installs)
    by_real = {i.root.resolve(): i for i in installs}
    for label, value in (
        ("--rocm-path", requested_path),
        ("ROCM_PATH", environ.get("ROCM_PATH", "")),
    ):
        if not value:
            continue
        path = Path(value)
        if not path.exists():
            raise ProbeError(
                f"The ROCm path {value} given by {label} does not exist",
                "the build would look for hipcc, clang and the device libraries there",
                _path_fix(label, installs),
            )
        if path.resolve() not in by_real:
            raise ProbeError(
                f"The ROCm path {value} given by {label} is not a ROCm install",
                "it has none of bin/hipcc, .info/version, include/hip/hip_version.h or lib/llvm",
                _path_fix(label, installs),
            )
        return by_real[path.resolve()]
    order = {"HIP_PATH": 0, "/opt/rocm*": 1, "distro /usr": 2, "pip rocm-sdk": 3}
    ranked = sorted(
        (i for i in installs if i.source in order),
        key=lambda i: (
            order[i.source],
            0 if i.root.name == "rocm" else 1,
            tuple(-x for x in version_key(i.version)),
        ),
    )
    if not ranked:
        raise ProbeError(
            "No ROCm install was found",
            "looked in /opt/rocm*, $ROCM_PATH, $HIP_PATH, /usr and the pip rocm-sdk packages",
            "install ROCm (https://rocm.docs.amd.com, or `sudo apt-get install hipcc rocminfo` on "
            "Debian/Ubuntu) and pass --rocm-path /opt/rocm-X.Y.Z",
        )
    return ranked[0]


def _path_fix(label: str, installs: Sequence[RocmInstall]) -> str:
    found = ", ".join(str(i.root) for i in installs) or "none found"
    if label == "ROCM_PATH":
        return f"export ROCM_PATH=<a ROCm root> or `unset ROCM_PATH` (installs found: {found})"
    return f"pass --rocm-path <a ROCm root> (installs found: {found})"


def path_variable_warnings(
    installs: Iterable[RocmInstall], environ: Mapping[str, str]
) -> tuple[str, ...]:
    """Warnings about ROCM_PATH/HIP_PATH that disagree (hipcc and CMake then mix two ROCms)."""
    rocm = environ.get("ROCM_PATH", "")
    hip = environ.get("HIP_PATH", "")
    if not rocm or not hip:
        return ()
    rocm_real = Path(rocm).resolve()
    hip_real = hip_path_root(Path(hip)).resolve()
    if rocm_real == hip_real:
        return ()
    return (
        f"HIP_PATH={hip} belongs to a different install than ROCM_PATH={rocm}; hipcc reads "
        "HIP_PATH and CMake reads ROCM_PATH, so the build would mix two ROCm versions",
    )
