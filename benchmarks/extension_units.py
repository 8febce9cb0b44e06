"""Benchmark: each `--with` extension is its own unit of the build's steps (issue 39 item 3).

Makes git remotes of the fixture torch and flash-attention (tests/fixtures/fake*), a git
remote and two folders of the fixture extension under other package names, then runs on one
work dir: (1) a build with a recipe extension, a `git+URL` one (no @ref: its default branch)
and a plain folder whose path has a space; (2) the same build with a clean git folder added;
(3) the same with the plain folder's file edited; (4) the same without the plain folder. It
prints, per build, the steps that ran (not the re-checks of volatile steps) and the wall time.
Needs clang-22 and git (like tests/integration/test_extension_sources.py).

    python3 benchmarks/extension_units.py [--arch gfx942]
"""

from __future__ import annotations

import argparse
import os
import re
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


def as_repo(folder: Path, tag: str = "") -> Path:
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"],
                 *([["tag", tag]] if tag else [])):
        subprocess.run([*GIT, "-C", str(folder), *args], check=True)
    return folder


def extension(dest: Path, package: str) -> Path:
    shutil.copytree(FIXTURES / "fakeext", dest)
    (dest / "rfext").rename(dest / package)
    setup = dest / "setup.py"
    setup.write_text(setup.read_text().replace('"rfext"', f'"{package}"'))
    return dest


def build(work: Path, torch: Path, arch: str, env: dict[str, str],
          with_: str) -> tuple[list[str], float]:
    argv = [sys.executable, "-m", "invoke", "build", "--arch", arch, "--work-dir", str(work),
            "--repo", str(torch), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", "--with", with_]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stdout[-2000:] + done.stderr[-2000:])
    ran = re.findall(r"^==> \[\d+/\d+\] ([\w.-]+): (?!re-check)", done.stdout, re.MULTILINE)
    return ran, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", default="gfx942")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rf-extension-units-") as tmp:
        root = Path(tmp)
        torch = as_repo(shutil.copytree(FIXTURES / "fakepytorch", root / "pytorch"), "v2.8.0")
        fa = as_repo(shutil.copytree(FIXTURES / "fakeflashattn", root / "fa"), "v2.8.3")
        alpha = as_repo(extension(root / "alpha-ext", "alphaext"), "v0.1.0")
        gamma = extension(root / "my sources" / "gamma-ext", "gammaext")
        beta = as_repo(extension(root / "beta-ext", "betaext"))
        env = {**os.environ, "HIP_PLATFORM": "amd", "NO_COLOR": "1",
               "ROCMFORGE_BUILD_ENV": "HIP_CLANG_PATH=/usr/lib/llvm-22/bin",
               "ROCMFORGE_COMPANION_REPOS": f"flash-attention={fa.as_uri()}"}
        work = root / "work"
        three = f"flash-attention@v2.8.3,git+{alpha.as_uri()},{gamma}"
        runs = [("recipe + git+URL + folder (fresh work dir)", three),
                ("add a git folder", f"{three},{beta}")]
        for label, words in runs:
            ran, seconds = build(work, torch, args.arch, env, words)
            print(f"{label}: {len(ran)} step(s) ran, {seconds:.1f} s")
            if len(ran) < 12:
                print("  " + ", ".join(ran))
        source = gamma / "gammaext" / "__init__.py"
        source.write_text(source.read_text() + "# edited\n")
        ran, seconds = build(work, torch, args.arch, env, f"{three},{beta}")
        print(f"edit a file of the folder: {len(ran)} step(s) ran, {seconds:.1f} s\n  "
              + ", ".join(ran))
        ran, seconds = build(work, torch, args.arch, env,
                             f"flash-attention@v2.8.3,git+{alpha.as_uri()},{beta}")
        print(f"drop the folder: {len(ran)} step(s) ran, {seconds:.1f} s\n  " + ", ".join(ran))


if __name__ == "__main__":
    main()
