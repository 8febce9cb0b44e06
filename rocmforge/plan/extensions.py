"""The extension part of the build plan: which extensions `--with` names, and how each is built.

Owns: `extension_choices` (pure: each resolved ExtensionSource as an AddOnChoice with its
repository, ref, the backend that covers the targets, and the variables of its build, MAX_JOBS
and the variable its project reads lowered to what its compile jobs need), `build_order`
(extensions the last build made from the same source first, in its order, then the new or
changed ones: a step with no stamp redoes every later step, so adding or bumping one reruns
only its own steps) and `extension_notes` (what plan and preflight say per extension). The
steps themselves are the companions' (plan.companion_steps), with the extension's pairing and
its pre-build commands. Must not: run git or pip (sources.extension_sources resolves each
word before the plan; the pairing step reads the checkout).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from rocmforge.knowledge.addons import KIND_EXTENSION, AddOnChoice
from rocmforge.knowledge.companions import version_of_ref
from rocmforge.knowledge.extensions import (
    FORM_FOLDER,
    FORM_RECIPE,
    TARGETS_FIELD,
    ExtensionSource,
    ExtensionTable,
    backend_for,
    recipe_for_source,
)
from rocmforge.plan.environment import max_jobs

ROCM_SHORT_FIELD = "{rocm_short}"


def library_version_short(rocm_version: str, hip_version: str = "") -> str:
    """The short code an extension names its ROCm library by ("72" for 7.2): upstream
    (bitsandbytes' CMakeLists.txt) takes HIP's major.minor from hipconfig, and the runtime
    torch.version.hip's. Before ROCm 10 HIP's major.minor is ROCm's; from ROCm 10 on they
    differ (ROCm 10.0 ships HIP 7.15), so the planner passes the install's HIP version
    (plan.rocm_facts.hip_version_of); without one on ROCm 10 this is "" and the build's own
    hipconfig decides."""
    version = hip_version or rocm_version
    match = re.match(r"(\d+)\.(\d+)", version)
    if not match or (not hip_version and int(match.group(1)) >= 10):
        return ""
    return match.group(1) + match.group(2)


def extension_choices(sources: Sequence[ExtensionSource], table: ExtensionTable,
                      targets: Sequence[str], *, jobs: int, cores: int,
                      mem_total_gib: float, rocm_short: str = "") -> tuple[AddOnChoice, ...]:
    """What to build for each resolved extension (pure): the repository and ref, the backend
    that covers the targets (a UsageError when none does, before any step), and the variables
    of its build: the targets in its own variable, its ROCm switches, the backend's, and the
    job count lowered to what its compile jobs need (`jobs` is the torch build's MAX_JOBS), in
    every variable its project reads for it."""
    chosen: list[AddOnChoice] = []
    for source in sources:
        recipe = recipe_for_source(source, table)
        backend = backend_for(recipe, targets)
        # A recipe's own variable takes processor names (flash-attention's CK check refuses
        # gfx942:sramecc+); a generic build gets PYTORCH_ROCM_ARCH as torch's own build has it.
        names = targets if recipe.generic else list(dict.fromkeys(
            t.split(":", 1)[0] for t in targets))
        joined = recipe.targets_sep.join(names)
        env = {recipe.targets_var: joined, **recipe.env, **(backend.env if backend else {})}
        if recipe.mem_per_job_gib:
            fit = max_jobs(cores, mem_total_gib, recipe.mem_per_job_gib)
            if fit < jobs:
                for variable in recipe.jobs_vars:
                    env[variable] = str(fit)
        notes = [n for n in (recipe.note,) if n]
        if recipe.mem_per_job_gib and not recipe.jobs_vars and mem_total_gib and \
                cores * recipe.mem_per_job_gib > mem_total_gib:
            notes.append(f"it honours no job-count variable and a compile job needs about "
                         f"{recipe.mem_per_job_gib:g} GiB: {cores} jobs on {cores} cores can "
                         f"need {cores * recipe.mem_per_job_gib:g} GiB, this machine has "
                         f"{mem_total_gib:.0f} GiB")
        fields = {TARGETS_FIELD: joined, ROCM_SHORT_FIELD: rocm_short}
        chosen.append(AddOnChoice(
            kind=KIND_EXTENSION, name=source.name, package=recipe.package, repo=source.repo,
            ref=source.ref,
            version=version_of_ref(source.ref) if source.form != FORM_FOLDER else "",
            origin="recipe" if source.form == FORM_RECIPE and not source.given_ref else "ref",
            build_env=MappingProxyType(dict(sorted(env.items()))),
            backend=backend.name if backend else "", backend_note=backend.note if backend else "",
            module=recipe.module,
            pre_build=tuple(_filled(argv, fields) for argv in recipe.pre_build),
            torch_pin_file=recipe.torch_pin_file, torch_pin_pattern=recipe.torch_pin_pattern,
            version_file=recipe.version_file, version_pattern=recipe.version_pattern,
            verify=recipe.verify, form=source.form, commit=source.commit,
            digest=source.digest,
            targets_file=(backend.targets_file if backend and backend.targets_file
                          else recipe.targets_file),
            targets_pattern=(backend.targets_pattern if backend and backend.targets_file
                             else recipe.targets_pattern),
            processors=tuple(dict.fromkeys(t.split(":", 1)[0] for t in targets)),
            reads=recipe.reads,
            read_vars=tuple(dict.fromkeys((recipe.targets_var, *recipe.env,
                                           *(backend.env if backend else ())))),
            note="; ".join(notes)))
    return tuple(chosen)


def _filled(argv: Sequence[str], fields: Mapping[str, str]) -> tuple[str, ...]:
    """A pre-build command with its fields filled; an argument whose field is not known is
    left out (the project's own default applies)."""
    out = []
    for arg in argv:
        if any(key in arg and not value for key, value in fields.items()):
            continue
        for key, value in fields.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return tuple(out)


def build_order(sources: Sequence[ExtensionSource],
                earlier: Sequence[tuple[str, str, str]]) -> tuple[ExtensionSource, ...]:
    """The extensions in the order their steps run: first those the last build made from the
    same repository at the same commit (or folder digest), in that build's order (`earlier`:
    its (name, repo, commit or sha256:digest) records), then every other one in the order
    given. A source whose commit is not known yet counts as changed."""
    same = {name: index for index, (name, repo, version) in enumerate(earlier)
            if any(s.name == name and s.repo == repo and s.version and s.version == version
                   for s in sources)}
    kept = sorted((s for s in sources if s.name in same), key=lambda s: same[s.name])
    return (*kept, *(s for s in sources if s.name not in same))


def extension_notes(choices: Sequence[AddOnChoice]) -> list[str]:
    """One note per extension: source, ref, backend, the variables that carry targets and
    backend."""
    notes = []
    for choice in choices:
        backend = f"backend {choice.backend} ({choice.backend_note}); " if choice.backend else ""
        variables = " ".join(f"{k}={v}" for k, v in choice.build_env.items())
        pin = (f"; the torch it needs is read from {choice.torch_pin_file}"
               if choice.torch_pin_file else "")
        if choice.form == FORM_FOLDER:
            where = f"the folder {choice.repo} (content sha256:{choice.digest[:12]})"
        else:
            commit = f" = {choice.commit[:12]}" if choice.commit and choice.commit != choice.ref \
                else ""
            where = f"{choice.ref}{commit} from {choice.repo}"
        tree = (f"; the targets it accepts are read from its {choice.targets_file}"
                if choice.targets_file else "")
        note = f"; {choice.note}" if choice.note else ""
        notes.append(f"extension {choice.name}: {where}; {backend}built with {variables}{pin}"
                     f"{tree}{note}")
    return notes
