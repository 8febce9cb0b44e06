"""TheRock's pip ROCm SDK: what its `rocm_sdk` package and `rocm-sdk` command say when the
installed `rocm` packages do not fit the GPU or the request.

Owns: the rules whose answer needs a value read and reshaped from the line (the target family
asked for). Must not: hold fixed-text messages (config/diagnostics.toml, "Extension builds and
TheRock's pip SDK") or the loader's view of the same packages (loader.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

ROCM_SDK = ("ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:build_tools/packaging/python/"
            "templates/rocm/src/rocm_sdk")
_GFX = re.compile(r"gfx[0-9a-fA-FxX]{2,4}")


def _target_family(match: re.Match[str], view: LineView) -> Reading | None:
    family = match.group("family")
    gfx = _GFX.match(family)
    if gfx is None:
        return None
    available = match.group("available").strip()
    return Reading(
        subject=gfx.group(0),
        cause=f"ROCM_SDK_TARGET_FAMILY asks rocm_sdk for the target family {family}, and the "
              f"installed rocm packages were built for other families only ({available}); "
              "rocm_sdk looks up the target-specific libraries by that family",
        fix=f"unset ROCM_SDK_TARGET_FAMILY (rocm_sdk then asks offload-arch for the GPU) or set "
            f"it to one of {available}; a GPU none of them covers needs the rocm packages "
            "from the index of its own family (TheRock's RELEASES.md lists them)")


def _libraries_missing(match: re.Match[str], view: LineView) -> Reading | None:
    extras = match.group("extras") or "libraries"
    masked = match.group("extras") is None
    return Reading(
        subject=f"rocm[{extras}]",
        cause=("rocm_sdk was asked for a ROCm library (torch preloads them at import) and the "
               f"Python package that ships it is not installed: rocm[{extras}]"
               + (" for the GPU's target family (the math libraries' package; rocm_sdk's "
                  "find_libraries then fails on its own unset variable instead of printing "
                  "its 'Missing required rocm libraries' message)" if masked else "")),
        fix=f"install it from the index and version of the installed rocm packages: `pip "
            f"install \"rocm[{extras}]\" --index-url <the index of your GPU family>` (with "
            "torch, rocm[libraries,devel]); `rocm-sdk targets` and `rocm-sdk test` show what "
            "is installed")


# TheRock's wheels hold no symlinks: an executable link becomes a small C stub that execs its
# target by a path relative to itself and, when that fails, prints "could not exec <target>: "
# and perror's text (ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:build_tools/
# _therock_utils/exe_stub_gen.py, used by py_packaging.py _populate_runtime_symlink).
# Only a target inside one of the SDK's packages (_rocm_sdk_core, _rocm_sdk_devel, ...) is
# theirs: other programs print "could not exec" too.
_SDK_PACKAGE = re.compile(r"[/\\](?P<pkg>_rocm_sdk_\w+)[/\\]")


def _stub_target_missing(match: re.Match[str], view: LineView) -> Reading | None:
    target = match.group("target")
    package = _SDK_PACKAGE.search(target)
    if package is None:
        return None
    program = re.split(r"[/\\]", target)[-1]
    return Reading(
        subject=program,
        cause=f"a program of the pip-installed ROCm SDK is a stub that runs {program} from "
              f"its own package ({package.group('pkg')}), and {program} is not there: the "
              f"installed rocm-sdk release was packaged without {program} (the stub's target "
              "was left out of the wheel) or its files are incomplete",
        fix=f"install a rocm-sdk release whose {package.group('pkg')} ships {program} (`pip "
            "install --upgrade \"rocm[libraries,devel]\"` from your GPU family's index), or "
            "reinstall it if files were removed; until then run the real program by its own "
            "path under `rocm-sdk path --root` instead of the stub")


# `rocm-sdk init` expands rocm[devel]'s tarball into site-packages/_rocm_sdk_devel. Before
# ROCm/TheRock f8980bf92d9d26f3bd21fb7029471d86910f83e7 (#2169, 2025-11-18) _lock_and_expand let
# tarfile extract each symlink and then, on Windows, read it back (dest_path.readlink()) to
# make a hardlink; where the user may not create symlinks, tarfile makes none and the read
# fails with a Windows error. Later releases make the hardlinks from the tar entry itself.
_EXPAND_FRAME = re.compile(r"rocm_sdk[/\\]_devel\.py\S*, line \d+, in _lock_and_expand$")


def _devel_symlink_read(match: re.Match[str], view: LineView) -> Reading | None:
    recent = view.previous[-8:]
    if not any(_EXPAND_FRAME.search(line) for line in recent) or \
            not any("readlink()" in line for line in recent):
        return None
    return Reading(
        subject="_rocm_sdk_devel",
        cause=f"`rocm-sdk init` could not expand the ROCm devel package on Windows: this "
              "rocm_sdk extracts the tarball's symlinks and reads them back to turn them into "
              "hardlinks, and this user may not create symlinks (not an administrator, "
              f"Developer Mode off), so no symlink was made and reading it failed "
              f"([WinError {match.group('code')}]); _rocm_sdk_devel is left half-expanded",
        fix="install newer rocm packages (rocm_sdk after ROCm/TheRock#2169 makes hardlinks "
            "without creating symlinks), or allow symlinks (Windows Developer Mode, or an "
            "administrator prompt); then delete the half-expanded site-packages\\"
            "_rocm_sdk_devel folder and run `rocm-sdk init` again")


def _preload_env(match: re.Match[str], view: LineView) -> Reading | None:
    value = match.group("value")
    return Reading(
        subject="ROCM_SDK_PRELOAD_LIBRARIES",
        cause=f"rocm_sdk preloads the libraries the environment variable "
              f"ROCM_SDK_PRELOAD_LIBRARIES names ('{value}') and could not load one of them "
              "(the traceback above names it: a name rocm_sdk does not know, or a package "
              "that is not installed); the errors before this line are that one failure",
        fix="unset ROCM_SDK_PRELOAD_LIBRARIES, or name in it only libraries of the installed "
            "rocm packages (comma- or semicolon-separated short names such as amdhip64, "
            "hipblaslt; `rocm-sdk test` checks them)")


# TheRock's selector wheel was published as `rocm-sdk` until its rename to `rocm`
# (ROCm/TheRock a1a521899a465af423186ed0ed76881ededafddc, #796, June 2025); its extras and the
# rocm-sdk-core / -libraries / -devel packages kept their names. pip asked for the old name
# finds only the selectors left from before the rename, pinned to rocm-sdk-core builds an
# index no longer holds. "rocm-sdk" alone, never rocm-sdk-core or another package's name.
_OLD_SELECTOR = ("ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:build_tools/packaging/"
                 "python/templates/rocm/setup.py (name=\"rocm\"; renamed from rocm-sdk by "
                 "a1a521899a465af423186ed0ed76881ededafddc, #796); RELEASES.md (rocm[devel] "
                 "installs rocm-sdk-devel); ROCm/TheRock#2726")


def _old_selector_name(match: re.Match[str], view: LineView) -> Reading | None:
    extras = (match.group("extras") or "").replace(" ", "")
    wanted = f"rocm{extras}" if extras else "rocm[libraries,devel]"
    return Reading(
        subject="rocm-sdk",
        cause=f"pip was asked for rocm-sdk{extras}, the name TheRock's ROCm selector package "
              "had before it was renamed rocm (June 2025): the index still holds the "
              "selectors of that time (6.5.0rc2025060x), pinned to rocm-sdk-core versions it "
              "no longer has, so pip cannot install any of them",
        fix=f"install the renamed selector from the same index, `pip install \"{wanted}\" "
            "--index-url <your GPU family's index>` (extras keep their names: devel, "
            "libraries), or the package itself at the installed core's version (rocm-sdk-devel "
            "== `rocm-sdk version`)")


RULES: tuple[Rule, ...] = (
    # Tier 0: the RuntimeError comes last, after the KeyError and "Unknown rocm library" it
    # wraps (which loader.py's rocm-sdk-preload would read as torch's own preload list).
    Rule(id="rocm-sdk-preload-env", klass="rocm-install", tier=0,
         triggers=("ROCM_SDK_PRELOAD_LIBRARIES=",),
         pattern=rx(r"^RuntimeError: Could not preload libraries from environment variable "
                     r"ROCM_SDK_PRELOAD_LIBRARIES='(?P<value>[^']*)'"),
         read=_preload_env,
         source=f"{ROCM_SDK}/__init__.py (initialize_process: env_override); reproduced by "
                "make/devtr.sh"),
    Rule(id="rocm-sdk-devel-symlink-windows", klass="rocm-install",
         triggers=("[WinError ",),
         pattern=rx(r"^(?:FileNotFoundError|OSError|PermissionError): \[WinError "
                     r"(?P<code>\d+)\]"),
         read=_devel_symlink_read,
         source="ROCm/TheRock@f8980bf92d9d26f3bd21fb7029471d86910f83e7^:build_tools/packaging/"
                "python/templates/rocm/src/rocm_sdk/_devel.py (_lock_and_expand: tf.extract, "
                "then dest_path.readlink() on Windows); fixed by that commit (#2169: "
                "'Check for Windows symlink prior to tf.extract'; issues #1906, #1913)"),
    Rule(id="rocm-sdk-stub-target-missing", klass="rocm-install",
         triggers=("could not exec ",),
         pattern=rx(r"^could not exec (?P<target>\S+): No such file or directory$"),
         read=_stub_target_missing,
         source="ROCm/TheRock@89553ce3746eda74ade42557470d25e37c91b6f0:build_tools/"
                "_therock_utils/exe_stub_gen.py (POSIX_EXE_STUB_TEMPLATE: fprintf 'could not "
                "exec %s: ' then perror); compiled and run here by make/devpk5.sh; "
                "ROCm/TheRock#5810 (amdllvm missing from _rocm_sdk_devel/bin)"),
    # The message find_libraries means to print, and what it prints at TheRock's snapshot: the
    # `except ModuleNotFoundError` only notes the package, and the next line reads the unset
    # py_module (Python >= 3.11 and older wordings of UnboundLocalError).
    Rule(id="rocm-sdk-libraries-missing", klass="rocm-install",
         triggers=("Missing required rocm libraries", "'py_module'"),
         pattern=rx(r"Missing required rocm libraries\..*`pip install rocm\[(?P<extras>[^\]]+)\]`"
                     r"|UnboundLocalError: (?:cannot access )?local variable 'py_module'"),
         requires=rx(r"Missing required rocm libraries|rocm_sdk[/\\]__init__\.py\S*, line \d+, "
                      r"in find_libraries"),
         read=_libraries_missing,
         source=f"{ROCM_SDK}/__init__.py (find_libraries: missing_extras, then "
                "Path(py_module.__file__) with py_module unset)"),
    Rule(id="rocm-sdk-old-selector-name", klass="python-packaging",
         triggers=("rocm-sdk",),
         pattern=rx(r"(?:Cannot install |No matching distribution found for |satisfies the "
                    r"requirement )(?:\S+, )*rocm-sdk(?P<extras>\[[\w, -]+\])?(?:[=<>!~]=\S*)?"
                    r"(?![\w-])"),
         read=_old_selector_name, source=_OLD_SELECTOR),
    Rule(id="rocm-sdk-target-family", klass="gpu-target",
         triggers=("ROCM_SDK_TARGET_FAMILY=",),
         pattern=rx(r"Requested ROCM_SDK_TARGET_FAMILY=(?P<family>\S+) is not available in the "
                     r"distribution \(available: (?P<available>[^)]*)\)"),
         read=_target_family,
         source=f"{ROCM_SDK}/_dist_info.py (determine_target_family)"),
)
