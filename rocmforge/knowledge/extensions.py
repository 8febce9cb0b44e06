"""PyTorch extensions built against the new torch (config/extensions.toml) as frozen records.

Owns: `Recipe` (repository and default ref, the wheel's distribution name and the module it
imports as, the variable that carries the targets and the variables that select the ROCm build,
the backends and the targets each supports, where the tree pins torch, where it states its
version, the memory one compile job needs, commands to run before the wheel build, the verify
op), the loader, `is_extension_request` (which `--with` words are extensions: a recipe's name,
`git+URL@ref` or a local folder), `parse_source` (pure: the source a word names, a
git URL's and a ref's syntax checked, companion_repos never replacing an explicit source),
`recipe_for` (a recipe, or a generic one for any other
repository using torch.utils.cpp_extension or CMake), `backend_for` (the first backend that
covers every target) and `torch_pin_in` (the torch a tree's requirements pin). Must not: run
git or pip, or read a checkout (callers pass file text).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from urllib.parse import unquote

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from rocmforge.errors import ConfigError, UsageError
from rocmforge.knowledge.addons import read_addons
from rocmforge.knowledge.toml_files import check_keys, config_dir, expect_type

EXTENSIONS_FILE = "extensions.toml"
GIT_PREFIX = "git+"
TARGETS_FIELD = "{targets}"
# How a `--with` word names its source.
FORM_RECIPE = "recipe"  # a recipe's name, with an optional @ref
FORM_GIT = "git"  # git+URL, with an optional @ref
FORM_GIT_FOLDER = "git-folder"  # a local git repository without local changes: its HEAD commit
FORM_FOLDER = "folder"  # any other folder: its files, versioned by their content digest
_GIT_URL = re.compile(r"(?:https?|ssh|git|file)://[^/\s]*/\S+|[\w.-]+@[\w.-]+:\S+")
_BAD_REF = re.compile(r"\s|\.\.|^-|[~^:?*\[\\]|@\{|\.lock$|/$|^/")


@dataclass(frozen=True, kw_only=True)
class Backend:
    name: str
    targets: tuple[str, ...]  # () = any target; the table's estimate before the checkout
    env: Mapping[str, str]
    note: str = ""
    targets_file: str = ""  # where the tree lists the targets it accepts ("" = it lists none)
    targets_pattern: str = ""

    def covers(self, processor: str) -> bool:
        return not self.targets or processor in self.targets


@dataclass(frozen=True, kw_only=True)
class Recipe:
    name: str
    repo: str
    ref: str
    package: str  # the wheel's distribution name ("" = any wheel the build leaves)
    module: str  # what `import` takes ("" = not known: verify checks the wheel only)
    targets_var: str
    targets_sep: str
    env: Mapping[str, str]
    backends: tuple[Backend, ...]
    torch_pin_file: str = ""
    torch_pin_pattern: str = ""
    version_file: str = ""
    version_pattern: str = ""
    mem_per_job_gib: float = 0.0
    jobs_vars: tuple[str, ...] = ("MAX_JOBS",)  # the variables its build takes its jobs from
    # Where the tree states the memory a compile job needs: `mem_pattern`'s group `gib`, times
    # `mem_times_pattern`'s group `times` when given (plan/job_memory_rows.py reads it).
    mem_file: str = ""
    mem_pattern: str = ""
    mem_times_pattern: str = ""
    targets_file: str = ""  # where the tree lists the targets it accepts (backends may too)
    targets_pattern: str = ""
    torch_ref: str = ""  # the ref that pairs with torch 2.{minor} ("" = none known)
    reads: tuple[str, ...] = ()  # the files of the tree that read its variables
    note: str = ""
    pre_build: tuple[tuple[str, ...], ...] = ()
    verify: str = ""
    source: str = ""
    generic: bool = False


@dataclass(frozen=True, kw_only=True)
class ExtensionTable:
    path: Path
    recipes: Mapping[str, Recipe]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.recipes)


def split_with(items: Sequence[str], table: ExtensionTable) -> tuple[list[str], list[str]]:
    """The `--with` / companions words as (companion words, extension words)."""
    companions: list[str] = []
    extensions: list[str] = []
    for item in items:
        for word in str(item).split(","):
            word = word.strip()
            if word:
                (extensions if is_extension_request(word, table) else companions).append(word)
    return companions, extensions


def is_extension_request(word: str, table: ExtensionTable) -> bool:
    """An extension in `--with`: a recipe's name (with an optional @ref), a git URL
    (`git+https://...@ref`) or a local folder."""
    text = word.strip()
    name = text.partition("@")[0].strip().lower()
    # A folder is written as a path (/..., ./..., ../..., ~/...), so that a folder that happens
    # to be called torchvision in the current directory never turns a companion into one.
    return (name in table.recipes or text.startswith(GIT_PREFIX)
            or text.startswith(("/", "./", "../", "~")))


@dataclass(frozen=True, kw_only=True)
class ExtensionSource:
    """Where one `--with` extension comes from, as the plan resolved it before any step.

    `repo` is a URL or, for a folder, its absolute path; `ref` what the checkout takes (a
    branch, tag or commit; "" for a plain folder); `commit` what the ref named when the plan
    was made ("" when the remote could not be asked, and for a plain folder); `digest` a plain
    folder's content digest (its version in the lock and the manifest); `explicit` that the
    user named the source (git+URL, a folder), which a companion_repos entry never replaces."""

    word: str
    name: str
    form: str
    repo: str
    ref: str
    commit: str = ""
    digest: str = ""
    explicit: bool = False
    given_ref: bool = False
    notes: tuple[str, ...] = ()

    @property
    def version(self) -> str:
        """What identifies this source's content: a plain folder's digest, else its commit."""
        return f"sha256:{self.digest}" if self.digest else self.commit


def parse_source(word: str, table: ExtensionTable, repos: Mapping[str, str],
                 torch_version: str = "") -> ExtensionSource:
    """The source one extension word names, before any lookup (pure): a recipe's repository
    (or its companion_repos entry) at the ref given or the recipe's, a git URL (its syntax
    checked) at the ref given ("" = the remote's default branch), or a folder's absolute path.
    A git URL or a folder is the user's explicit source: a companion_repos entry of the same
    name is not used, and the source's notes say so. A recipe named without a ref is built at
    the ref that pairs with `torch_version` where the recipe knows one (apex), and a ref of
    that form for another torch is refused."""
    text = word.strip()
    if text.startswith(GIT_PREFIX):
        url, ref = split_git_word(text)
        check_git_url(text, url)
        check_ref(text, ref)
        name = recipe_of(url, table).name
        return ExtensionSource(word=text, name=name, form=FORM_GIT, repo=url, ref=ref,
                               explicit=True, given_ref=bool(ref),
                               notes=_ignored_repo(name, url, repos))
    head, _, ref = text.partition("@")
    if head.strip().lower() in table.recipes:
        recipe = table.recipes[head.strip().lower()]
        check_ref(text, ref.strip())
        other = torch_ref_conflict(recipe, ref.strip(), torch_version)
        if other:
            raise UsageError(
                f"{recipe.name} at {ref.strip()} pairs with torch {other}, but this build makes "
                f"torch {torch_version}",
                f"{recipe.name}'s {recipe.torch_ref.replace('{minor}', 'N')} branches pair with "
                "torch 2.N (config/extensions.toml cites it)",
                f"leave out the ref (--with {recipe.name} builds "
                f"{torch_ref_for(recipe, torch_version)}), or build that torch")
        return ExtensionSource(word=text, name=recipe.name, form=FORM_RECIPE,
                               repo=repos.get(recipe.name, "") or recipe.repo,
                               ref=ref.strip() or torch_ref_for(recipe, torch_version)
                               or recipe.ref, given_ref=bool(ref.strip()))
    folder = os.path.abspath(os.path.expanduser(text))
    name = generic_recipe(folder).name
    return ExtensionSource(word=text, name=name, form=FORM_FOLDER, repo=folder, ref="",
                           explicit=True, notes=_ignored_repo(name, folder, repos))


def _ignored_repo(name: str, source: str, repos: Mapping[str, str]) -> tuple[str, ...]:
    if name not in repos:
        return ()
    return (f"{name}: built from {source}, which --with names; the companion_repos entry "
            f"{name}={repos[name]} is not used",)


def check_git_url(word: str, url: str) -> None:
    """A UsageError unless `url` is a URL git can fetch (scheme://host/path, file:///path or
    user@host:path)."""
    if not _GIT_URL.fullmatch(url):
        raise UsageError(
            f"{word!r} (--with) is no git URL",
            "after git+ the kit expects a URL git fetches: https://host/owner/repo.git, "
            "ssh://host/path, file:///path or user@host:path, then an optional @ref",
            "write it as git+https://github.com/owner/repo.git@ref, or give a folder as a path "
            "(./folder)")


def check_ref(word: str, ref: str) -> None:
    """A UsageError for a ref git cannot name (spaces, '..', a leading '-', ...)."""
    if ref and _BAD_REF.search(ref):
        raise UsageError(f"{ref!r} in {word!r} (--with) is no git ref",
                         "git names no branch, tag or commit that way",
                         "give a tag, a branch or a 40-hex commit after @")


def recipe_of(repo: str, table: ExtensionTable) -> Recipe:
    """The recipe of a repository: a recipe's own, or that of a fork or mirror of a recipe's
    project (same name), else the generic one."""
    recipe = generic_recipe(repo)
    known = table.recipes.get(recipe.name)
    return dataclasses.replace(known, repo=repo) if known is not None else recipe


def recipe_for_source(source: ExtensionSource, table: ExtensionTable) -> Recipe:
    if source.form == FORM_RECIPE:
        return dataclasses.replace(table.recipes[source.name], repo=source.repo)
    return recipe_of(source.repo, table)


def split_git_word(word: str) -> tuple[str, str]:
    """`git+URL@ref` as (URL, ref); the ref is taken only from an '@' in the URL's path, so a
    user in the authority stays part of the URL (git+ssh://git@github.com/x/y.git has none)."""
    url = word.strip()[len(GIT_PREFIX):] if word.strip().startswith(GIT_PREFIX) else word.strip()
    scheme, sep, rest = url.partition("://")
    if sep:
        authority, slash, path = rest.partition("/")
        head = f"{scheme}://{authority}{slash}"
    else:
        head, path = "", url
    location, at, ref = path.rpartition("@")
    if not at:
        return url, ""
    return head + location, ref.strip()


def generic_recipe(repo: str) -> Recipe:
    """Any other extension: built with pip against the build venv's torch, the targets in
    PYTORCH_ROCM_ARCH (what torch.utils.cpp_extension and PyTorch's CMake read)."""
    last = repo.rstrip("/").rsplit("/", 1)[-1]
    stem = re.sub(r"\.git$", "", unquote(last) if repo.startswith("file://") else last) \
        or "extension"
    name = re.sub(r"[^a-z0-9_-]+", "-", stem.lower()).strip("-") or "extension"
    return Recipe(name=name, repo=repo, ref="", package="", module="",
                  targets_var="PYTORCH_ROCM_ARCH", targets_sep=";", env=MappingProxyType({}),
                  backends=(), generic=True,
                  source="generic: torch.utils.cpp_extension and PyTorch's CMake read "
                         "PYTORCH_ROCM_ARCH")


def backend_for(recipe: Recipe, targets: Sequence[str]) -> Backend | None:
    """The first backend of the recipe whose targets cover every requested processor; None
    when the recipe has no backends (one build for all); a UsageError when none covers them."""
    if not recipe.backends:
        return None
    processors = [t.split(":", 1)[0] for t in targets]
    for backend in recipe.backends:
        if all(backend.covers(p) for p in processors):
            return backend
    told = "; ".join(f"{b.name}: {', '.join(b.targets) or 'any'}" for b in recipe.backends)
    raise UsageError(
        f"{recipe.name} has no backend for {', '.join(processors)}",
        f"its backends and their targets ({told}; config/extensions.toml)",
        f"build {recipe.name} for the targets one backend supports (--arch), or leave it out",
    )


def torch_pin_in(text: str, pattern: str) -> str:
    """The torch version a requirements file pins ("2.9.1"), "" when it pins none."""
    match = re.search(pattern, text, re.MULTILINE) if pattern else None
    return match.group(1).strip() if match else ""


def pin_matches(pinned: str, torch_version: str) -> bool:
    """Whether the torch being built satisfies the tree's `torch==X` pin (the local version
    and pre-release of a source build ignored: 2.9.0a0+rocm7.14 is a 2.9.0)."""
    try:
        spec = SpecifierSet(f"=={pinned}" if pinned[0].isdigit() else pinned)
    except (InvalidSpecifier, IndexError):
        return True
    base = re.match(r"\d+(?:\.\d+)*", torch_version)
    return base is not None and spec.contains(base.group(), prereleases=True)


def _pair(entry: Mapping[str, object], file_key: str, pattern_key: str, where: str) -> None:
    if bool(entry.get(file_key)) != bool(entry.get(pattern_key)):
        raise ConfigError(f"{where}: {file_key} and {pattern_key} go together",
                          "the pattern finds the fact in that file of the tree",
                          "give both, or neither")


def targets_in(text: str, pattern: str) -> tuple[str, ...]:
    """The processor names (gfxNNN) in the first match of `pattern` in a tree's file text;
    () when the pattern does not match."""
    match = re.search(pattern, text, re.MULTILINE) if pattern else None
    return tuple(re.findall(r"gfx[0-9a-f]+", match.group(1))) if match else ()


def unaccepted_targets(name: str, ref: str, where: str, accepted: Sequence[str],
                       processors: Sequence[str]) -> UsageError | None:
    """The refusal of a build whose targets the extension's tree does not list (`accepted`,
    read from `where`); None when it lists them all, or lists none where the recipe looks."""
    missing = [p for p in processors if accepted and p not in accepted]
    if not missing:
        return None
    return UsageError(
        f"{name} at {ref} does not build for {', '.join(missing)}: its {where} accepts "
        f"{', '.join(accepted)}",
        "its build would stop on them, or leave them out of the wheel without a word",
        f"build {name} for the targets it lists (--arch), at a ref that lists yours "
        f"(--with {name}@<ref>), or leave it out")


def unread_variables(name: str, ref: str, reads: Sequence[str], texts: Sequence[str],
                     variables: Sequence[str]) -> UsageError | None:
    """The refusal of a build whose tree no longer reads a variable of its recipe (the files
    `reads` with their `texts`): the variable would be ignored and the wheel would not be what
    the plan says. None when every variable is named in them."""
    joined = "\n".join(texts)
    missing = [v for v in variables if v not in joined]
    if not missing:
        return None
    return UsageError(
        f"{name} at {ref} reads no {', '.join(missing)} in {', '.join(reads)}",
        "its recipe (config/extensions.toml) sets them for this build; a tree that ignores them "
        "builds something else than the plan says",
        f"build a ref the recipe fits (--with {name}@<ref>), or update its recipe from the "
        "tree")


def torch_ref_for(recipe: Recipe, torch_version: str) -> str:
    """The ref of `recipe` that pairs with the torch being built (apex: release/1.N.0 for
    torch 2.N), "" when the recipe knows no such rule or the version is unknown."""
    match = re.match(r"2\.(\d+)", torch_version)
    return recipe.torch_ref.replace("{minor}", match.group(1)) if recipe.torch_ref and match \
        else ""


def torch_ref_conflict(recipe: Recipe, ref: str, torch_version: str) -> str:
    """The torch minor a ref of the recipe's torch_ref form pairs with, when it is not the
    torch being built ("" otherwise)."""
    want = torch_ref_for(recipe, torch_version)
    if not want or ref == want:
        return ""
    shape = re.escape(recipe.torch_ref).replace(re.escape("{minor}"), r"(\d+)")
    match = re.fullmatch(shape, ref)
    return f"2.{match.group(1)}" if match else ""


def pin_text(pinned: str) -> str:
    """How a tree's torch pin reads: "torch==2.9.0", "torch>=2.10"."""
    return f"torch=={pinned}" if pinned[:1].isdigit() else f"torch{pinned.replace(' ', '')}"


def load_extensions(directory: str | Path | None = None) -> ExtensionTable:
    return _load(str(config_dir(directory) / EXTENSIONS_FILE))


@functools.cache
def _load(path_text: str) -> ExtensionTable:
    path = Path(path_text)
    recipes: dict[str, Recipe] = {}
    for read in read_addons(
            path, "extension",
            required=("repo", "ref", "package", "module", "targets_var", "env", "source"),
            optional=("targets_sep", "backend", "torch_pin_file", "torch_pin_pattern",
                      "version_file", "version_pattern", "mem_per_job_gib", "jobs_vars",
                      "targets_file", "targets_pattern", "torch_ref", "reads", "note",
                      "pre_build", "verify", "mem_file", "mem_pattern", "mem_times_pattern")):
        name, where, entry = read.name, read.where, read.entry
        backends = []
        for index, item in enumerate(expect_type(entry.get("backend", []), list,
                                                 where=f"{where} backend")):
            bwhere = f"{where} backend[{index}]"
            item = expect_type(item, dict, where=bwhere)
            check_keys(item, where=bwhere, required=("name", "targets", "env"),
                       optional=("note", "targets_file", "targets_pattern"))
            _pair(item, "targets_file", "targets_pattern", bwhere)
            backends.append(Backend(
                name=expect_type(item["name"], str, where=bwhere),
                targets=tuple(str(t) for t in expect_type(item["targets"], list, where=bwhere)),
                env=MappingProxyType({str(k): str(v) for k, v in
                                      expect_type(item["env"], dict, where=bwhere).items()}),
                note=str(item.get("note", "")),
                targets_file=str(item.get("targets_file", "")),
                targets_pattern=str(item.get("targets_pattern", ""))))
        pre = tuple(tuple(str(a) for a in expect_type(argv, list, where=f"{where} pre_build"))
                    for argv in expect_type(entry.get("pre_build", []), list,
                                            where=f"{where} pre_build"))
        pattern = str(entry.get("torch_pin_pattern", ""))
        _pair(entry, "torch_pin_file", "torch_pin_pattern", where)
        _pair(entry, "targets_file", "targets_pattern", where)
        _pair(entry, "mem_file", "mem_pattern", where)
        recipes[name] = Recipe(
            name=name,
            repo=expect_type(entry["repo"], str, where=f"{where} repo"),
            ref=expect_type(entry["ref"], str, where=f"{where} ref"),
            package=expect_type(entry["package"], str, where=f"{where} package"),
            module=expect_type(entry["module"], str, where=f"{where} module"),
            targets_var=expect_type(entry["targets_var"], str, where=f"{where} targets_var"),
            targets_sep=str(entry.get("targets_sep", ";")),
            env=MappingProxyType({str(k): str(v) for k, v in
                                  expect_type(entry["env"], dict, where=f"{where} env").items()}),
            backends=tuple(backends),
            torch_pin_file=str(entry.get("torch_pin_file", "")),
            torch_pin_pattern=pattern,
            version_file=str(entry.get("version_file", "")),
            version_pattern=str(entry.get("version_pattern", "")),
            mem_per_job_gib=float(expect_type(entry.get("mem_per_job_gib", 0.0), (int, float),
                                              where=f"{where} mem_per_job_gib")),
            jobs_vars=tuple(str(v) for v in expect_type(entry.get("jobs_vars", ["MAX_JOBS"]),
                                                        list, where=f"{where} jobs_vars")),
            mem_file=str(entry.get("mem_file", "")),
            mem_pattern=str(entry.get("mem_pattern", "")),
            mem_times_pattern=str(entry.get("mem_times_pattern", "")),
            pre_build=pre,
            verify=str(entry.get("verify", "")),
            targets_file=str(entry.get("targets_file", "")),
            targets_pattern=str(entry.get("targets_pattern", "")),
            torch_ref=str(entry.get("torch_ref", "")),
            reads=tuple(str(f) for f in expect_type(entry.get("reads", []), list,
                                                    where=f"{where} reads")),
            note=str(entry.get("note", "")),
            source=expect_type(entry["source"], str, where=f"{where} source"),
        )
    return ExtensionTable(path=path, recipes=MappingProxyType(recipes))
