"""Randomized kill test: does `dist/` ever disagree with `manifest.json` after a build is killed?

Builds the fixture torch with the fixture torchvision and torchaudio (`--with`), then runs
builds that alternate between two target sets (so every run replaces the wheels under the same
names) and ends each one with SIGKILL or SIGINT to the whole process group at a random instant
of its run. After each kill it checks what every reader would see: when a manifest exists, each
wheel it lists is in dist/ with the recorded size and sha256 (knowledge.manifest.wheel_problems,
deep), and the torch wheel's device code holds exactly the manifest's targets (read with the
real clang-offload-bundler-22). No manifest is a consistent state (no finished build).

    python3 benchmarks/kill_dist_manifest.py [--trials 50] [--seed 1]   # 50 kills

Needs git and clang-22 (tools of tests/integration/test_build_companions.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from buildhelpers import wheel_so_targets  # noqa: E402
from test_build_companions import FIXTURES, env_for, fixture_remote  # noqa: E402

from rocmforge.errors import ConfigError  # noqa: E402
from rocmforge.knowledge.manifest import read_manifest, wheel_problems  # noqa: E402

ARCHES = ("gfx1100;gfx942", "gfx90a")


def argv(work: Path, repo: Path, arch: str) -> list[str]:
    return [sys.executable, "-m", "invoke", "build", "--arch", arch, "--work-dir", str(work),
            "--repo", str(repo), "--ref", "v2.8.0", "--clang", "22", "--triton", "skip",
            "--skip-preflight", "--system-site-packages", "--with", "torchvision,torchaudio"]


def disagreement(work: Path) -> str:
    """'' when dist/ and its manifest agree (or there is no manifest), else what differs."""
    path = work / "dist" / "manifest.json"
    if not path.exists():
        return ""
    try:
        manifest = read_manifest(path)
    except ConfigError as exc:
        return f"unreadable manifest: {exc.what}"
    problems = wheel_problems(manifest, deep=True)
    if problems:
        return "; ".join(problems)
    torch = work / "dist" / manifest.wheels["torch"]
    held = {t for targets in wheel_so_targets(torch).values() for t in targets}
    if held and held != set(manifest.targets):
        return f"manifest targets {sorted(manifest.targets)}, wheel holds {sorted(held)}"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="rocmforge-kill-") as tmp:
        root = Path(tmp)
        remotes = {"pytorch": fixture_remote(FIXTURES / "fakepytorch", root / "pytorch", "v2.8.0"),
                   "torchvision": fixture_remote(FIXTURES / "fakevision", root / "vision",
                                                 "v0.23.0"),
                   "torchaudio": fixture_remote(FIXTURES / "fakeaudio", root / "audio",
                                                "v2.8.0")}
        env = env_for({k: v for k, v in remotes.items() if k != "pytorch"})
        work = root / "work"
        durations = []
        # A full build, then two that switch targets: the last two say how long a run that
        # replaces the wheels takes (the kills fall within it).
        for arch in (*ARCHES, ARCHES[0]):
            start = time.perf_counter()
            done = subprocess.run(argv(work, remotes["pytorch"], arch), cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=900)
            durations.append(time.perf_counter() - start)
            if done.returncode != 0:
                print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
                return 1
        span = max(durations[1:])
        bad = []
        kills = {"SIGKILL": 0, "SIGINT": 0}
        trial = 0
        while sum(kills.values()) < args.trials and trial < 4 * args.trials:
            trial += 1
            arch = ARCHES[trial % 2]
            sig = rng.choice((signal.SIGKILL, signal.SIGINT))
            delay = rng.uniform(0.0, span)
            child = subprocess.Popen(argv(work, remotes["pytorch"], arch), cwd=ROOT, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
            try:
                child.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, sig)
                kills[sig.name] += 1
                child.wait(timeout=120)
                if sig == signal.SIGINT:  # a second Ctrl-C, as an impatient user does
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
            time.sleep(0.2)  # let killed grandchildren go
            found = disagreement(work)
            status = "DISAGREE " + found if found else "ok"
            print(f"run {trial:3}: {arch:15} {sig.name:7} at {delay:5.1f} s: {status}",
                  flush=True)
            if found:
                bad.append((trial, found))
        print(f"\n{trial} runs, {kills['SIGKILL']} ended by SIGKILL and {kills['SIGINT']} by "
              f"SIGINT (the others finished first); a build that replaces the wheels takes "
              f"{span:.1f} s here: {len(bad)} with dist/ and manifest.json disagreeing")
        return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
