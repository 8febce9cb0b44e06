"""What to do when a fetch over the network fails: the fix text of every "Cannot fetch" error.

Owns: the offline alternatives for each thing the kit fetches (the PyTorch repository and its
submodules, the Triton repository, the Triton wheel index, AOTriton, a --with extension's
repository), named through the flag
table (rocmforge.settings.FLAG_OF_SETTING) and the settings' own names, so a fix never names a
flag that does not exist (integration/test_offline_advice.py scans each fix text). Must not:
fetch, run git, or decide the exit status (rocmforge.errors.EnvironmentFailed does: 3).
"""

from __future__ import annotations

from rocmforge.settings import ENV_PREFIX, FLAG_OF_SETTING


def how_to_set(setting: str, value: str = "...") -> str:
    """How a user sets `setting` on the command line: its flag when the table has one, else its
    ROCMFORGE_* variable or invoke.yaml key (a setting without a flag is never named as one)."""
    flag = FLAG_OF_SETTING.get(setting)
    if flag is not None:
        return f"{flag.long} {value}"
    return (f"the {setting} setting ({ENV_PREFIX}{setting.upper()}={value}, or "
            f"`rocm: {setting}:` in invoke.yaml)")


def _ahead() -> str:
    return ("or, while there is network, run `invoke checkout`, `invoke triton.checkout` and "
            "`invoke fetch` ahead: the build then finds its sources and AOTriton on disk")


def offline_fix(project: str, url: str) -> str:
    """The fix of a failed git fetch of `project` ("PyTorch", "Triton", or another name) from
    `url`: check the network, then the ways to build without it."""
    clone = f"`git clone --mirror {url} /srv/git/{project.lower()}.git`"
    if project == "Triton":
        triton = FLAG_OF_SETTING["triton_mode"].long
        return (f"check the network (or proxy) and the URL; without network: build without "
                f"Triton ({triton} skip; torch.compile will not work), take the prebuilt wheel "
                f"({triton} wheel, with {how_to_set('triton_index', 'URL')} pointing at a "
                f"reachable index), or clone it once where there is network ({clone}) and point "
                f"{how_to_set('triton_repo', 'PATH')} at the clone; {_ahead()}")
    repo = how_to_set("pytorch_repo", "/srv/git/pytorch.git") if project == "PyTorch" else \
        "the repository setting"
    return (f"check the network (or proxy) and the URL; without network: clone it once where "
            f"there is network ({clone}) and pass {repo}, or map each URL (submodules too) to a "
            f"local mirror with the `mirrors` setting; {_ahead()}")


def extension_fix(name: str, url: str, recipe: bool) -> str:
    """The fix of a `--with` extension whose repository `url` cannot be reached before the
    build: a mirror of it (for a recipe's name through companion_repos, whose entry a git URL
    the user wrote never takes; for any URL through mirrors) or a folder of its source."""
    clone = f"/srv/git/{name}.git"
    where = (how_to_set("companion_repos", f"{name}={clone}") if recipe
             else f"--with git+file://{clone}@REF")
    return (f"check the network (or proxy) and the URL; without network: clone it once where "
            f"there is network (`git clone --mirror {url} {clone}`) and pass {where}, or map "
            f"{url} to that clone with the `mirrors` setting, or give a folder that holds "
            f"{name}'s source (--with ./{name})")


def index_fix() -> str:
    """The fix of a Triton wheel index that cannot be reached or read."""
    triton = FLAG_OF_SETTING["triton_mode"].long
    return (f"check the network (or proxy), or set {how_to_set('triton_index', 'URL')} to a "
            f"reachable mirror of the index; without network: {triton} source (a source build "
            f"at the pin, from a local clone in {how_to_set('triton_repo', 'PATH')}) or "
            f"{triton} skip (torch.compile will not work)")
