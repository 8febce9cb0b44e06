"""Benchmark: what `--with torchvision,torchaudio` adds to a finished fixture build.

Makes git remotes of the fixture torch, torchvision and torchaudio (tests/fixtures/fake*),
builds torch alone in a fresh work dir, then runs the same build with `--with
torchvision,torchaudio` (only the companion steps run: they come after torch's install) and
prints each companion step's duration from its stamp, and both wall times. Needs clang-22 and
git (like tests/integration/test_build_companions.py).

    python3 benchmarks/companion_cost.py [--arch "gfx1100;gfx942"]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
GIT = ["git", "-c", "user.email=b@example.invalid", "-c", "user.name=bench",
       "-c", "init.defaultBranch=main"]


def remote(source: Path, dest: Path, tag: str) -> Path:
    shutil.copytree(source, dest)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", tag], ["tag", tag]):
        subprocess.run([*GIT, "-C", str(dest), *args], check=True)
    return dest


def build(work: Path, torch: Path, arch: str, env: dict[str, str], *extra: str) -> float:
    argv = [sys.executable, "-m", "invoke", "build", "--arch", arch, "--work-dir", str(work),
            "--repo", str(torch), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", *extra]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stdout[-2000:] + done.stderr[-2000:])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="gfx1100;gfx942")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rf-companion-cost-") as tmp:
        root = Path(tmp)
        torch = remote(FIXTURES / "fakepytorch", root / "pytorch", "v2.8.0")
        vision = remote(FIXTURES / "fakevision", root / "vision", "v0.23.0")
        audio = remote(FIXTURES / "fakeaudio", root / "audio", "v2.8.0")
        env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
               "ROCMFORGE_BUILD_ENV": "HIP_CLANG_PATH=/usr/lib/llvm-22/bin",
               "ROCMFORGE_COMPANION_REPOS": f"torchvision={vision.as_uri()};"
                                            f"torchaudio={audio.as_uri()}"}
        work = root / "work"
        alone = build(work, torch, args.arch, env)
        added = build(work, torch, args.arch, env, "--with", "torchvision,torchaudio")
        print(f"targets {args.arch}: torch alone (fresh work dir) {alone:.1f} s; "
              f"adding --with torchvision,torchaudio {added:.1f} s")
        for stamp in sorted((work / "state" / "stamps").glob("*.json")):
            name = stamp.stem
            if name.startswith(("torchvision-", "torchaudio-", "companions-")):
                seconds = json.loads(stamp.read_text()).get("duration_s", 0.0)
                print(f"  {name:24s} {seconds:6.2f} s")


if __name__ == "__main__":
    main()
