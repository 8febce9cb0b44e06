"""The manifest a build of the device machine's own stack would carry, for verify --manifest.

The device machine has CUDA PyTorch, torchvision and torchaudio preinstalled (no rocmforge build
there), so this names what they were built with: every optional part of config/features.toml as
built, and torchvision/torchaudio at their installed versions and source commits. With it, the
verify suite's manifest paths (the feature checks and the companion checks against the manifest's
versions and commits) run on a real GPU:

    python benchmarks/device_manifest.py $OUT/manifest.json
    python -m rocmforge.verify --device cuda --manifest $OUT/manifest.json --json $OUT/verify.json

Runs with the standard library, torch and the companions only (no rocmforge dependencies needed
beyond the package itself).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import tomllib

from rocmforge.knowledge.manifest import build_manifest, write_manifest

ROOT = Path(__file__).resolve().parent.parent


def main(path: str) -> int:
    features_toml = tomllib.loads((ROOT / "config" / "features.toml").read_text())
    names = list(features_toml["features"])
    doc = build_manifest(targets=[], wheels={"torch": "", "triton": ""}, lock=None,
                         toolchain={}, env={}, steps=[], plan_settings={},
                         created="device machine's preinstalled stack")
    doc["features"] = {name: {"built": True, "why": "preinstalled wheel"} for name in names}
    companions = {}
    for name in ("torchvision", "torchaudio"):
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # a broken companion is the verify check's to report
            print(f"{name}: not importable ({exc}); left out of the manifest")
            continue
        version = str(module.__version__).split("+")[0]
        commit = str(getattr(getattr(module, "version", None), "git_version", "") or "")
        companions[name] = {"version": version, "ref": f"v{version}", "commit": commit,
                            "repo": f"https://github.com/pytorch/{name[5:]}", "wheel": "",
                            "sha256": "", "torch": "", "patches": []}
    doc["companions"] = companions
    write_manifest(Path(path), doc)
    print(f"wrote {path}: features {', '.join(names)}; companions "
          + ", ".join(f"{n} {c['version']} ({c['commit'][:12] or 'no commit'})"
                      for n, c in companions.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
