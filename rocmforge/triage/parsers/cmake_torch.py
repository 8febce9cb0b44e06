"""find_package(Torch) without a TorchConfig.cmake: a project that builds against torch (vLLM,
an extension's CMake) was not pointed at the torch install's CMake package. Not a component
to install from a distribution: cmake_package.py asks this module for the reading when the
package CMake did not find is Torch.

Owns: the reading for Torch's missing package config. Must not: read files, run programs or
pick between findings (the engine does); its rules are cmake_package.py's.
"""

from __future__ import annotations

from rocmforge.triage.rule import Reading, Rule

# find_package(Torch) reads the TorchConfig.cmake that a torch install carries in
# torch/share/cmake/Torch: torch 2.13 here (torch/utils/__init__.py: cmake_prefix_path =
# <torch>/share/cmake). A project that builds against torch (vLLM, an extension's CMake) finds
# it only where CMAKE_PREFIX_PATH or Torch_DIR leads there: not a package to install from a
# distribution, a prefix the build did not pass.
_TORCH_PREFIX = "python3 -c 'import torch.utils; print(torch.utils.cmake_prefix_path)'"


def torch_reading(name: str) -> Reading:
    return Reading(
        subject="torch", klass="cmake",
        cause=f"CMake found no {name}Config.cmake: find_package({name}) looks for the CMake "
              "package that a torch install carries in torch/share/cmake/Torch, and no prefix "
              "CMake searched (CMAKE_PREFIX_PATH, Torch_DIR) leads to it: the configure was not "
              "pointed at the torch it builds against, or that Python has no torch",
        fix=f"pass the torch install's CMake prefix: -DCMAKE_PREFIX_PATH=\"$({_TORCH_PREFIX})\" "
            "(or Torch_DIR=<that>/Torch), run with the Python whose torch the build uses (pip: "
            "--no-build-isolation, so it does not build against another torch), and install "
            "torch there first if it has none; then configure again from a clean build folder")


RULES: tuple[Rule, ...] = ()
