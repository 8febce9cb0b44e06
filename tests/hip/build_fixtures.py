"""Compile the HIP sources next to this file into the binaries the inspect tests read.

Run by the tests once per session (into a temp dir), or by hand:
`python3 tests/hip/build_fixtures.py OUTDIR`. Nothing it writes is committed.

Each fixture records the targets it was compiled for, per translation unit, so tests compare the
reader's output with what the compilers were asked to build. Compilers: Debian's hipcc (ROCm 5.2,
drives clang-15; uncompressed bundles, code object V4) and clang-22 (`-nogpulib -nogpuinc`; plain,
and compressed CCOB v3 (default) and v2 via COMPRESSED_BUNDLE_FORMAT_VERSION=2), see reference
rocm-arch-toolchain.md §6.2/§6.3.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, kw_only=True)
class Fixture:
    """One built file and, per bundle (translation unit) in link order, its targets."""

    name: str
    path: Path
    bundles: tuple[tuple[str, ...], ...] = ()
    container: str = "plain"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(sorted({t for b in self.bundles for t in b}))


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, HIP_PLATFORM="amd")
    env.update(extra or {})
    return env


def _run(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    done = subprocess.run(argv, env=_env(env), cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")


def _arch_flags(targets: tuple[str, ...]) -> list[str]:
    return [f"--offload-arch={t}" for t in targets]


def _hipcc(src: str, targets: tuple[str, ...], out: Path, *extra: str) -> None:
    _run(["hipcc", "-fPIC", *extra, *_arch_flags(targets), "-c", str(HERE / src), "-o", str(out)])


def _clang22(
    src: str, targets: tuple[str, ...], out: Path, *extra: str, env: dict[str, str] | None = None
) -> None:
    argv = ["clang-22", "-x", "hip", "-nogpulib", "-nogpuinc", "-fPIC", *extra]
    _run([*argv, *_arch_flags(targets), "-c", str(HERE / src), "-o", str(out)], env=env)


def _link(out: Path, objects: list[Path]) -> None:
    _run(["gcc", "-shared", "-o", str(out), *map(str, objects)])


def make_nobits(src: Path, out: Path, section: str = ".hip_fatbin") -> None:
    """Copy `src` with `section` turned into SHT_NOBITS (as TheRock's kpack split leaves it)."""
    from elftools.elf.elffile import ELFFile

    shutil.copyfile(src, out)
    with open(out, "r+b") as handle:
        elf = ELFFile(handle)
        index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == section)
        at = elf["e_shoff"] + index * elf["e_shentsize"] + 4
        handle.seek(at)
        handle.write(struct.pack("<I", 8))  # SHT_NOBITS


def build_debian(out: Path) -> list[Fixture]:
    """hipcc (clang-15): two TUs linked into one .so, an -fgpu-rdc object, a stripped copy."""
    tu1 = ("gfx90a:xnack+", "gfx90a:xnack-", "gfx1030")
    tu2 = ("gfx908",)
    _hipcc("deb_add.hip", tu1, out / "deb_add.o")
    _hipcc("deb_scale.hip", tu2, out / "deb_scale.o")
    lib = out / "libdeb.so"
    _link(lib, [out / "deb_add.o", out / "deb_scale.o"])
    _hipcc("deb_add.hip", ("gfx90a",), out / "deb_rdc.o", "-fgpu-rdc")
    make_nobits(lib, out / "libdeb_stripped.so")
    return [
        Fixture(name="deb", path=lib, bundles=(tu1, tu2)),
        Fixture(name="deb_obj", path=out / "deb_add.o", bundles=(tu1,)),
        Fixture(name="deb_rdc", path=out / "deb_rdc.o", container="rdc"),
        Fixture(name="deb_stripped", path=out / "libdeb_stripped.so", container="stripped"),
    ]


def build_clang22(out: Path) -> list[Fixture]:
    """clang-22: plain, CCOB v3 (default) and v2, generic targets, xnack/sramecc variants."""
    fixtures: list[Fixture] = []
    plain = (("gfx1100", "gfx942:xnack-", "gfx11-generic"), ("gfx1201", "gfx90a:sramecc+:xnack-"))
    v3 = (("gfx1151", "gfx942"), ("gfx11-generic", "gfx1100", "gfx90a:xnack+"))
    v2 = (("gfx1201", "gfx90a:xnack-"), ("gfx1030",))
    for name, tus, extra, env, container in (
        ("c22_plain", plain, (), None, "plain"),
        ("c22_v3", v3, ("--offload-compress",), None, "ccob-v3/zstd"),
        ("c22_v2", v2, ("--offload-compress",), {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"},
         "ccob-v2/zstd"),
    ):  # fmt: skip
        objects = []
        for index, (src, targets) in enumerate(
            zip(("bare_add.hip", "bare_mul.hip"), tus, strict=True)
        ):
            obj = out / f"{name}_{index}.o"
            _clang22(src, targets, obj, *extra, env=env)
            objects.append(obj)
        lib = out / f"lib{name}.so"
        _link(lib, objects)
        fixtures.append(Fixture(name=name, path=lib, bundles=tus, container=container))
    _clang22("bare_add.hip", ("gfx942",), out / "c22_newdriver.o", "--offload-new-driver",
             "-fgpu-rdc")  # fmt: skip
    fixtures.append(Fixture(name="c22_newdriver", path=out / "c22_newdriver.o", container="rdc"))
    return fixtures


def build_wheel(out: Path, members: dict[str, tuple[Path, int]]) -> Path:
    """A wheel-shaped zip (no install metadata needed by the reader) with the given members."""
    wheel = out / "fake_torch-0.0.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fake_torch/__init__.py", "")
        archive.writestr("fake_torch-0.0.0.dist-info/RECORD", "")
        for name, (path, compress) in members.items():
            archive.write(path, name, compress_type=compress)
    return wheel


def build_all(out: Path) -> dict[str, Fixture]:
    """Every fixture the installed compilers can build; missing compilers are skipped."""
    out.mkdir(parents=True, exist_ok=True)
    fixtures: list[Fixture] = []
    if shutil.which("hipcc") and shutil.which("gcc"):
        fixtures += build_debian(out)
    if shutil.which("clang-22") and shutil.which("gcc"):
        fixtures += build_clang22(out)
    by_name = {f.name: f for f in fixtures}
    members = {}
    if "deb" in by_name:
        members["fake_torch/lib/libdeb.so"] = (by_name["deb"].path, zipfile.ZIP_DEFLATED)
    if "c22_v3" in by_name:
        members["fake_torch/lib/libc22_v3.so"] = (by_name["c22_v3"].path, zipfile.ZIP_STORED)
    if "c22_plain" in by_name:
        members["fake_torch/lib/libc22_plain.so"] = (
            by_name["c22_plain"].path,
            zipfile.ZIP_DEFLATED,
        )
    if members:
        wheel = build_wheel(out, members)
        by_name["wheel"] = Fixture(name="wheel", path=wheel, container="wheel")
    return by_name


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "build/hip-fixtures")
    for fixture in build_all(target).values():
        print(f"{fixture.name:15} {fixture.path}  {' '.join(fixture.targets)}")
