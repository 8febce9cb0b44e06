"""config/rocm_kernels.toml: where each ROCm library PyTorch links keeps its GPU code.

Owns: `KernelLibrary` (its shared-library stems, the folders whose file names carry the target,
whether a missing target FAILs or WARNs, what in torch needs it, its source) and the loader.
Must not: read the install (rocmforge.probes.library_code does).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

from rocmforge.errors import ConfigError
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type, read_toml

KERNELS_FILE = "rocm_kernels.toml"
Need = Literal["required", "optional"]


@dataclass(frozen=True, kw_only=True)
class KernelLibrary:
    name: str
    shared: tuple[str, ...]
    folders: tuple[str, ...]
    need: Need
    used_for: str
    source: str
    workaround: str = ""
    """What a user sets so torch does not reach the library on a target it lacks ('' none)."""


@cache
def load_kernel_libraries(directory: str | None = None) -> tuple[KernelLibrary, ...]:
    path = config_dir(directory) / KERNELS_FILE
    doc = read_toml(path)
    check_keys(doc, where=str(path), optional=("libraries",))
    table = expect_type(doc.get("libraries", {}), dict, where=f"{path}: libraries")
    out = []
    for name, entry in table.items():
        where = f"{path}: libraries.{name}"
        expect_type(entry, dict, where=where)
        check_keys(entry, where=where,
                   required=("shared", "folders", "need", "used_for", "source"),
                   optional=("workaround",))
        need = expect_type(entry["need"], str, where=f"{where}.need")
        if need not in ("required", "optional"):
            raise ConfigError(f"{where}.need is {need!r}", "it says whether a target without "
                              "code stops the build", 'write "required" or "optional"')
        lists = {key: tuple(expect_type(v, str, where=f"{where}.{key}[]")
                            for v in expect_type(entry[key], list, where=f"{where}.{key}"))
                 for key in ("shared", "folders")}
        out.append(KernelLibrary(name=str(name), shared=lists["shared"], folders=lists["folders"],
                                 need=need,  # type: ignore[arg-type]  # checked above
                                 used_for=expect_type(entry["used_for"], str, where=where),
                                 source=expect_type(entry["source"], str, where=where),
                                 workaround=expect_type(entry.get("workaround", ""), str,
                                                        where=where)))
    return tuple(out)
