"""SDK-shaped wheels for the pip ROCm SDK tests (tests/fixtures/rocm_sdk/README.md) and a local
package index serving several projects (pytest-httpserver, PEP 691 JSON)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from buildhelpers import make_wheel, sha256_of

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "rocm_sdk"


def shared_library(folder: Path, name: str, cc: str = "cc", soname: str = "") -> bytes:
    """lib<name>.so compiled from fixtures/rocm_sdk/lib.c by the host C compiler (with
    DT_SONAME `soname` when given, as TheRock's libraries have)."""
    out = folder / f"lib{name}.so"
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", f'-DLIBRARY_NAME="{name}"', "-o", str(out),
                    *([f"-Wl,-soname,{soname}"] if soname else []),
                    str(FIXTURE / "lib.c")], check=True)
    return out.read_bytes()


def make_sdk_wheels(folder: Path, version: str, family: str,
                    targets: tuple[str, ...]) -> list[Path]:
    """The four wheels of one SDK release for one family."""
    libs = folder / "libs"
    family_pkg = "_rocm_sdk_libraries_" + family.replace("-", "_")
    py = {f"rocm_sdk/{p.name}": p.read_text() for p in (FIXTURE / "rocm_sdk").glob("*.py")}
    py["rocm_sdk/dist_info.json"] = json.dumps({"version": version, "targets": list(targets)})
    rocm = make_wheel(
        folder, "rocm", version, py,
        metadata=("Provides-Extra: libraries\nProvides-Extra: devel\n"
                  f"Requires-Dist: rocm-sdk-core=={version}\n"
                  f'Requires-Dist: rocm-sdk-libraries-{family}=={version}; extra == "libraries"\n'
                  f'Requires-Dist: rocm-sdk-devel=={version}; extra == "devel"\n'),
        entry_points="[console_scripts]\nrocm-sdk = rocm_sdk.__main__:main\n")
    core = make_wheel(folder, "rocm-sdk-core", version, {
        "_rocm_sdk_core/__init__.py": "",
        "_rocm_sdk_core/lib/libamdhip64.so": shared_library(libs, "amdhip64"),
        "_rocm_sdk_core/lib/libamd_comgr.so": shared_library(libs, "amd_comgr"),
    })
    libraries = make_wheel(folder, f"rocm-sdk-libraries-{family}", version, {
        f"{family_pkg}/__init__.py": "",
        f"{family_pkg}/lib/libhipblas.so": shared_library(libs, "hipblas"),
    })
    devel = _devel_wheel(folder, version, targets)
    return [rocm, core, libraries, devel]


ROCM_SETUP_PY = """\
import json

from setuptools import setup

with open("rocm_sdk/dist_info.json") as handle:
    INFO = json.load(handle)
VERSION = INFO["version"]
# The extras are computed here, at install, as upstream's setup.py does (build_per_target_extras).
EXTRAS = {"libraries": [f"rocm-sdk-libraries=={VERSION}"],
          "devel": [f"rocm-sdk-devel=={VERSION}"]}
for target in INFO["declared"]:
    EXTRAS[f"device-{target}"] = [f"rocm-sdk-device-{target}=={VERSION}"]
setup(name="rocm", version=VERSION, packages=["rocm_sdk"],
      package_data={"rocm_sdk": ["dist_info.json"]},
      install_requires=[f"rocm-sdk-core=={VERSION}"], extras_require=EXTRAS,
      entry_points={"console_scripts": ["rocm-sdk = rocm_sdk.__main__:main"]})
"""


def setuptools_wheel() -> Path | None:
    """A setuptools wheel already on this machine (virtualenv's seed copy) for an index that
    serves a `rocm` sdist: pip builds it in an isolated env from the same index."""
    try:
        import virtualenv.seed.wheels.embed as embed
    except ImportError:
        return None
    found = sorted(Path(embed.__file__).parent.glob("setuptools-*.whl"))
    return found[-1] if found else None


def rocm_sdist(folder: Path, version: str, py: dict[str, str], declared: tuple[str, ...]) -> Path:
    """rocm-<version>.tar.gz as upstream ships the meta package: an sdist whose setup.py
    writes the extras when pip builds it."""
    import io
    import tarfile

    top = f"rocm-{version}"
    files = {f"{top}/{name}": text for name, text in py.items()}
    info = json.loads(files[f"{top}/rocm_sdk/dist_info.json"])
    files[f"{top}/rocm_sdk/dist_info.json"] = json.dumps({**info, "declared": list(declared)})
    files[f"{top}/setup.py"] = ROCM_SETUP_PY
    files[f"{top}/pyproject.toml"] = ('[build-system]\nrequires = ["setuptools"]\n'
                                      'build-backend = "setuptools.build_meta"\n')
    files[f"{top}/PKG-INFO"] = f"Metadata-Version: 2.1\nName: rocm\nVersion: {version}\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in sorted(files.items()):
            data = text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return path


def make_multi_arch_sdk(folder: Path, version: str, targets: tuple[str, ...],
                        declared: tuple[str, ...] | None = None, *,
                        sdist: bool = False) -> list[Path]:
    """One multi-arch SDK release as TheRock's multi-arch index holds it: `rocm` (a wheel, or with
    `sdist` an sdist as upstream ships it) whose metadata declares a device-<target> extra for
    each of `declared` (default: every target; fewer is the shape of ROCm/TheRock#5347),
    rocm-sdk-core, the arch-neutral rocm-sdk-libraries, one
    rocm-sdk-device-<target> per target (its files overlay the libraries' package, as upstream's
    setup.py does) and rocm-sdk-devel."""
    libs = folder / "libs"
    declared = targets if declared is None else declared
    py = {f"rocm_sdk/{p.name}": p.read_text() for p in (FIXTURE / "rocm_sdk").glob("*.py")}
    py["rocm_sdk/dist_info.json"] = json.dumps({"version": version, "targets": list(targets)})
    extras = "".join(f'Provides-Extra: device-{t}\n'
                     f'Requires-Dist: rocm-sdk-device-{t}=={version}; extra == "device-{t}"\n'
                     for t in declared)
    rocm = rocm_sdist(folder, version, py, declared) if sdist else make_wheel(
        folder, "rocm", version, py,
        metadata=(f"Requires-Dist: rocm-sdk-core=={version}\n"
                  "Provides-Extra: libraries\n"
                  f'Requires-Dist: rocm-sdk-libraries=={version}; extra == "libraries"\n'
                  "Provides-Extra: devel\n"
                  f'Requires-Dist: rocm-sdk-devel=={version}; extra == "devel"\n' + extras),
        entry_points="[console_scripts]\nrocm-sdk = rocm_sdk.__main__:main\n")
    core = make_wheel(folder, "rocm-sdk-core", version, {
        "_rocm_sdk_core/__init__.py": "",
        "_rocm_sdk_core/lib/libamdhip64.so": shared_library(libs, "amdhip64"),
        "_rocm_sdk_core/lib/libamd_comgr.so": shared_library(libs, "amd_comgr"),
        # libtorch_python.so NEEDs libhipfile.so.0 since pytorch/pytorch#191069 (TheRock#7328).
        "_rocm_sdk_core/lib/libhipfile.so.0": shared_library(libs, "hipfile",
                                                              soname="libhipfile.so.0"),
        "_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5":
            shared_library(libs, "rocm_sysdeps_liblzma"),
    })
    libraries = make_wheel(folder, "rocm-sdk-libraries", version, {
        "_rocm_sdk_libraries/__init__.py": "",
        "_rocm_sdk_libraries/lib/libhipblas.so": shared_library(libs, "hipblas"),
        "_rocm_sdk_libraries/lib/libMIOpen.so.1": shared_library(libs, "MIOpen"),
    })
    devices = [make_wheel(folder, f"rocm-sdk-device-{t}", version,
                          {f"_rocm_sdk_libraries/.kpack/blas_lib_{t}.kpack": b"KPAK"},
                          metadata=f"Requires-Dist: rocm-sdk-libraries=={version}\n")
               for t in targets]
    devel = _devel_wheel(folder, version, targets)
    return [rocm, core, libraries, *devices, devel]


def _devel_wheel(folder: Path, version: str, targets: tuple[str, ...]) -> Path:
    """rocm-sdk-devel: the version file, a clang with its resource folder, HIP's CMake config
    version, and one device library per target (the facts the SDK's install says itself)."""
    devel_files: dict[str, str | bytes] = {
        "_rocm_sdk_devel/__init__.py": "",
        "_rocm_sdk_devel/.info/version": f"{version}\n",
        "_rocm_sdk_devel/lib/llvm/bin/clang": "",
        "_rocm_sdk_devel/lib/llvm/lib/clang/23/include/.keep": "",
        "_rocm_sdk_devel/lib/cmake/hip/hip-config-version.cmake":
            f'set(PACKAGE_VERSION "{version}")\n',
    }
    for target in targets:
        devel_files[f"_rocm_sdk_devel/lib/llvm/amdgcn/bitcode/oclc_isa_version_{target[3:]}.bc"] \
            = "BC"
    return make_wheel(folder, "rocm-sdk-devel", version, devel_files)


def serve_wheels(httpserver: Any, wheels: list[Path], prefix: str = "/simple") -> str:
    """Serve every wheel's project under <prefix>/<project>/ and the files; the index URL.
    A project it does not hold answers 404 (pytest-httpserver's answer to an unexpected
    request is 500, which a client would take for a failing server)."""
    by_project: dict[str, list[Path]] = {}
    for wheel in wheels:
        project = wheel.name.split("-", 1)[0].replace("_", "-").lower()
        by_project.setdefault(project, []).append(wheel)
    for project, files in by_project.items():
        doc = {"meta": {"api-version": "1.0"}, "name": project,
               "files": [{"filename": w.name, "url": f"/files/{w.name}",
                          "hashes": {"sha256": sha256_of(w)}} for w in files]}
        httpserver.expect_request(f"{prefix}/{project}/").respond_with_json(
            doc, content_type="application/vnd.pypi.simple.v1+json")
        for wheel in files:
            httpserver.expect_request(f"/files/{wheel.name}").respond_with_data(
                wheel.read_bytes(), content_type="application/octet-stream")
    httpserver.expect_request(re.compile(re.escape(prefix) + "/.*")).respond_with_data(
        "not found", status=404)
    return httpserver.url_for(prefix) + "/"
