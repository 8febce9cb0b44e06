"""One condition, every compiler and linker here: real g++-11/12, clang++-15/16/22, GNU ld,
ld.gold and ld.lld-22 print their own words for it, and triage gives each the same class and
subject (d10, devq8; the cases of tests/failures/make/devq8.sh)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rocmforge.triage import explain_text


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0, f"{argv} succeeded"
    return done.stdout + done.stderr


def _linker_flags(linker: str, tmp_path: Path) -> list[str]:
    """-fuse-ld=<linker>; lld as g++ needs it: an ld.lld on -B (Debian names it ld.lld-22)."""
    if linker != "lld":
        return [f"-fuse-ld={linker}"]
    folder = tmp_path / "lld-bin"
    folder.mkdir(exist_ok=True)
    lld = folder / "ld.lld"
    if not lld.exists():
        lld.symlink_to(shutil.which("ld.lld-22") or "ld.lld-22")
    return ["-fuse-ld=lld", f"-B{folder}/"]


_COMPILERS = ("g++-11", "g++-12", "clang++-15", "clang++-16", "clang++-22")


@pytest.mark.parametrize("compiler", [pytest.param(name, marks=pytest.mark.needs_tool(name))
                                      for name in _COMPILERS])
def test_missing_cstdint_is_libstdcxx_in_every_compilers_words(compiler: str,
                                                                tmp_path: Path) -> None:
    (tmp_path / "bits.cpp").write_text("#include <cstdint>\nstd::uint32_t x;\n")
    text = _run([compiler, "-nostdinc++", "-c", "bits.cpp", "-o", "bits.o"], tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject) == ("host-compiler", "libstdc++")
    assert "cstdint" in found.cause


@pytest.mark.needs_tool("g++-12", "ld.gold", "ld.lld-22")
@pytest.mark.parametrize("linker", ("bfd", "gold", "lld"))
def test_not_pic_local_symbol_is_read_from_every_linker(linker: str, tmp_path: Path) -> None:
    (tmp_path / "state.cpp").write_text("static int counter;\nint *ptr() { return &counter; }\n")
    subprocess.run(["g++-12", "-fno-pic", "-fno-PIE", "-c", "state.cpp", "-o", "state.o"],
                   cwd=tmp_path, check=True, timeout=120)
    text = _run(["g++-12", *_linker_flags(linker, tmp_path), "-shared", "state.o", "-o",
                 "libstate.so"], tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject) == ("link", "state")
    assert "-fPIC" in found.fix


@pytest.mark.needs_tool("g++-12", "ld.gold", "ld.lld-22")
@pytest.mark.parametrize("linker", ("bfd", "gold", "lld"))
def test_minus_l_colon_file_is_one_subject_for_every_linker(linker: str,
                                                            tmp_path: Path) -> None:
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    text = _run(["g++-12", *_linker_flags(linker, tmp_path), "main.cpp",
                 "-l:libamdhip64.so.6", "-o", "app"], tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject) == ("link", "libamdhip64.so.6")


@pytest.mark.needs_tool("gcc-12", "clang-22")
@pytest.mark.parametrize("compiler", ("gcc-12", "clang-22"))
def test_no_ld_on_path_is_a_missing_ld_in_both_drivers_words(compiler: str,
                                                             tmp_path: Path) -> None:
    (tmp_path / "probe.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(["gcc-12", "-c", "probe.c", "-o", "probe.o"], cwd=tmp_path, check=True,
                   timeout=120)
    env = {**os.environ, "PATH": str(tmp_path / "empty")}
    text = _run([shutil.which(compiler) or compiler, "probe.o", "-o", "probe"], tmp_path, env)
    found = explain_text(text)
    assert (found.klass, found.subject) == ("missing-component", "ld")


@pytest.mark.needs_tool("clang++-22")
def test_clang_ld_path_to_nothing_is_a_missing_linker(tmp_path: Path) -> None:
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    text = _run(["clang++-22", f"--ld-path={tmp_path}/bin/ld.lld", "main.cpp", "-o", "app"],
                tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == ("missing-component", "lld",
                                                        "linker-program-missing")


@pytest.mark.needs_tool("g++-12", "ld.gold", "ld.lld-22")
@pytest.mark.parametrize("linker", ("bfd", "gold", "lld"))
def test_a_hipified_twin_is_read_from_every_linker(linker: str, tmp_path: Path) -> None:
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    for name in ("roi_align", "roi_align_hip"):
        (tmp_path / f"{name}.cpp").write_text("int roi_align_forward(int n) { return n; }\n")
        subprocess.run(["g++-12", "-c", f"{name}.cpp", "-o", f"{name}.o"], cwd=tmp_path,
                       check=True, timeout=120)
    text = _run(["g++-12", *_linker_flags(linker, tmp_path), "main.cpp", "roi_align.o",
                 "roi_align_hip.o", "-o", "app"], tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == ("link", "roi_align_forward(int)",
                                                        "hipified-duplicate")


@pytest.mark.parametrize("compiler", [pytest.param(name, marks=pytest.mark.needs_tool(name))
                                      for name in ("g++-12", "clang++-15", "clang++-22")])
def test_alignas_after_a_gnu_attribute_in_each_compilers_words(compiler: str,
                                                               tmp_path: Path) -> None:
    (tmp_path / "shared.cpp").write_text(
        "#define SHARED __attribute__((used))\nstruct D { float x; };\n"
        "void f() { static SHARED alignas(16) D smem[4]; (void)smem; }\n")
    text = _run([compiler, "-std=c++17", "-c", "shared.cpp", "-o", "shared.o"], tmp_path)
    found = explain_text(text)
    subject = "gcc" if compiler.startswith("g++") else "clang"
    assert (found.klass, found.subject, found.rule) == ("host-compiler", subject,
                                                        "attribute-on-type")


@pytest.mark.needs_tool("g++-11", "g++-12")
@pytest.mark.parametrize("compiler", ("g++-11", "g++-12"))
@pytest.mark.parametrize("flag", ("--cuda-device-only", "-fno-gpu-rdc", "-nogpulib"))
def test_clangs_hip_options_given_to_gcc(compiler: str, flag: str, tmp_path: Path) -> None:
    (tmp_path / "device.cpp").write_text("int probe(int x) { return x; }\n")
    text = _run([compiler, flag, "-c", "device.cpp", "-o", "device.o"], tmp_path)
    found = explain_text(text)
    assert (found.klass, found.subject, found.rule) == ("host-compiler", "gcc",
                                                        "hip-flag-to-gcc")
