"""Run-time and packaging families read by shape for the misses of blind rounds r8 and r9
(issue 40): each rule reads its value (target, library, package, version, project) out of
lines the program prints, with other values than the round's cases, and declines on the
look-alikes that prove another cause or none."""

from __future__ import annotations

import pytest
from triagehelpers import assert_reads

from rocmforge.triage import explain_text

_AOTRITON_CMD = ("'/usr/bin/cmake' '-E' 'env' 'VIRTUAL_ENV=/b/venv' '/b/venv/bin/python' '-m' "
                 "'v3python.generate' '--target_gpus' '--build_dir' '/b/v3src' "
                 "'--noimage_mode'\nusage: generate.py [-h]\n"
                 "                   [--target_gpus {gfx90a_mod0,gfx942_mod0} ...]")


@pytest.mark.parametrize(("text", "klass", "subject", "rule", "words"), [
    # Tensile's own target table: the target and the library from the prefix; a target LLVM
    # removed names the one of its family that replaced it
    ("[rocBLAS] Tensile::FATAL: Architecture gfx941 not supported", "gpu-target", "gfx941",
     "tensile-architecture-not-supported",
     ("Architecture gfx941 not supported", "rocBLAS", "remove gfx941", "gfx942", "LLVM 21")),
    ("Tensile::FATAL: Architecture gfx1036 not supported", "gpu-target", "gfx1036",
     "tensile-architecture-not-supported",
     ("remove gfx1036", "the library", "a release of it that supports gfx1036")),
    # hipBLASLt's TensileLite target check, named by its check file
    ("CMake Error at cmake/tensilelite_supported_architectures.cmake:81 (message):\n"
     "  Unsupported GPU target: gfx1036", "math-library", "hipblaslt",
     "library-unsupported-target",
     ("gfx1036", "tensilelite_supported_architectures.cmake", "exclude gfx1036")),
    # rocBLAS' list of the TensileLibrary files it has, heading and cause cut from the log
    ('"/opt/rocm-6.4.0/lib/rocblas/library/TensileLibrary_lazy_gfx90a.dat"\n'
     '"/opt/rocm-6.4.0/lib/rocblas/library/TensileLibrary_lazy_gfx942.dat"',
     "math-library", "rocblas", "tensile-listed-library-file",
     ("TensileLibrary", "gfx90a", "built with the GPU's target")),
    ('host1 myservice[77]: "C:/app/rocm/rocblas/library/TensileLibrary_lazy_gfx1100.dat"',
     "math-library", "rocblas", "tensile-listed-library-file", ("gfx1100",)),
    # AOTriton's generator called with an empty target list, or an unknown target
    (_AOTRITON_CMD, "aotriton", "aotriton", "aotriton-no-supported-target",
     ("--target_gpus", "no target at all", "USE_FLASH_ATTENTION=0")),
    ("usage: generate.py [-h]\ngenerate.py: error: argument --target_gpus: invalid choice: "
     "'gfx1030_mod0' (choose from 'gfx90a_mod0', 'gfx942_mod0')", "aotriton", "aotriton",
     "aotriton-no-supported-target", ("gfx1030_mod0", "not one of the targets")),
    # clang's builtin that needs a target feature: the project from the path, the target
    # from the compile line when it names one
    ("/src/rocm-libraries/projects/rocwmma/samples/x.cpp:9:5: error: "
     "'__builtin_amdgcn_mfma_f32_32x32x8f16' needs target feature mai-insts",
     "gpu-target", "PYTORCH_ROCM_ARCH", "builtin-needs-target-feature",
     ("rocwmma", "__builtin_amdgcn_mfma_f32_32x32x8f16", "mai-insts", "MFMA")),
    ("clang++ --offload-arch=gfx1101 -x hip -c /w/app/k.hip\n/w/app/k.hip:3:1: error: "
     "'__builtin_amdgcn_wmma_f32_16x16x16_f16_w32' needs target feature gfx11-insts",
     "gpu-target", "gfx1101", "builtin-needs-target-feature", ("k.hip", "gfx11-insts")),
    # pip's check after an install: a package pins another torch than the ROCm one here
    ("xformers 0.0.29 requires torch==2.5.1, but you have torch 2.7.0+rocm6.3 which is "
     "incompatible.", "python-packaging", "torch", "pip-installed-pin-conflict",
     ("torch==2.5.1", "2.7.0+rocm6.3", "from source", "xformers")),
    ("torchao 0.9.0 requires torchvision>=0.21, but you'll have torchvision 0.20.0a0+git1234 "
     "which is incompatible.", "python-packaging", "torchvision", "pip-installed-pin-conflict",
     ("torchvision>=0.21", "0.20.0a0+git1234")),
    # a torch without HIP: its version's local label and torch.version.hip None
    ("torch.__version__: 2.5.1+cu121\ntorch.version.hip: None", "python-packaging", "torch",
     "torch-build-without-hip", ("2.5.1+cu121", "CUDA 121", "rocm")),
    ("PyTorch version: 2.13.0+cpu\ntorch.version.hip = None", "rocm-disabled", "USE_ROCM",
     "torch-build-without-hip", ("CPU-only", "+rocm wheel")),
    # pkgconf's module not found: asked for directly, or required by another module's .pc
    ("-- Checking for module 'libdrm'\n--   Package 'libdrm', required by 'virtual:world', not "
     "found", "missing-component", "libdrm", "pkgconf-package-missing",
     ("libdrm.pc", "asked for it directly", "PKG_CONFIG_PATH")),
    ("Package 'zlib', required by 'libelf', not found", "missing-component", "zlib",
     "pkgconf-package-missing", ("libelf.pc requires it", "zlib.pc")),
    # the old ROCm Triton's ISA probe
    ("Error: Attempting to get amgpu ISA Details list index out of range", "triton", "triton",
     "triton-rocm-isa-probe", ("list index out of range", "pytorch-triton-rocm")),
])
def test_a_devrt2_family_reads_its_value_from_the_line(text: str, klass: str, subject: str,
                                                        rule: str, words: tuple[str, ...]) -> None:
    assert_reads(text, klass, subject, rule, words)


@pytest.mark.parametrize("text", [
    # torch's own warning about an optional library it could not load: torch goes on
    "[W interface.cpp:47] Warning: Loading nvfuser library failed with: Error in dlopen: "
    "libnvfuser_codegen.so: cannot open shared object file: No such file or directory "
    "(function LoadingNvfuserLibrary)",
    "[W1205 11:44:14.123456789 Module.cpp:88] Warning: could not load libfoo.so.1: cannot open "
    "shared object file: No such file or directory",
    # pip's pin conflict with a torch from PyPI: not a ROCm torch's mismatch
    "vllm 0.6.6 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible.",
    # a pin on another package than torch
    "spacy 3.7.2 requires typer<0.10.0,>=0.3.0, but you have typer 0.15.2+rocm which is "
    "incompatible.",
    # a CUDA torch on a machine where nobody asked for HIP (an NVIDIA report)
    "torch.__version__: 2.6.0+cu124\nCUDA available: True",
    # a hipBLASLt file list, a ROCm torch's version: not rocBLAS' list, not a CUDA torch
    '"/opt/rocm/lib/hipblaslt/library/TensileLibrary_lazy_gfx942.dat"',
    "torch.__version__: 2.6.0+rocm6.2\ntorch.version.hip: None",
    # an optional module a configure that finished went on without
    "--   Package 'libdw', required by 'virtual:world', not found\n-- Configuring done (2.1s)",
    # TheRock's subproject lookup: not enabled, or declared after its dependent (one text)
    "CMake Error at cmake/therock_subproject.cmake:1222 (get_target_property):\n"
    "  get_target_property() called with non-existent target \"hipRAND\".",
    # Tensile's other fatal errors, and a generator line that names its targets
    "Tensile::FATAL: Your parameters resulted in 0 valid solutions.",
    "python -m v3python.generate --target_gpus gfx942_mod0 --build_dir /b",
])
def test_a_devrt2_look_alike_claims_nothing(text: str) -> None:
    found = explain_text(text)
    assert found.klass is None, (found.rule, found.subject)


def test_a_ck_builtin_feature_error_stays_composable_kernels() -> None:
    found = explain_text("/s/third_party/composable_kernel/include/ck/x.hpp:5:9: error: "
                         "'__builtin_amdgcn_mfma_f32_16x16x16f16' needs target feature mai-insts")
    assert (found.klass, found.rule) == ("composable-kernel", "ck-error")


def test_a_real_import_error_after_torchs_warning_still_counts() -> None:
    found = explain_text(
        "[W interface.cpp:47] Warning: Loading nvfuser library failed with: Error in dlopen: "
        "libnvfuser_codegen.so: cannot open shared object file: No such file or directory\n"
        "ImportError: libamdhip64.so.6: cannot open shared object file: No such file or "
        "directory")
    assert (found.klass, found.subject, found.rule) == ("import", "libamdhip64.so.6",
                                                         "cannot-open-so")


def test_the_argparse_error_of_an_empty_list_stays_the_signature() -> None:
    found = explain_text("AOTRITON_TARGET_ARCH gfx900\nusage: generate.py [-h]\n"
                         "generate.py: error: argument --target_gpus: expected at least one "
                         "argument")
    assert (found.klass, found.rule) == ("aotriton", "aotriton-no-target")
