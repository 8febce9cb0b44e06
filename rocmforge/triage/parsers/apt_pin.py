"""apt's exact-version dependency of a ROCm package met by another version of the same
name: its unmet-dependency report ("<pkg> : Depends: <dep> (= <version>) but <other> is to
be installed", further dependencies on indented lines) and its problem resolver's trace of
an installed package in the way ("Broken <pkg> Depends on <dep> < <installed> … > (= <v>)").
Both mean another repository's package, usually the distribution's own, shadows AMD's.

Owns: these two readings, only where a package named is ROCm's (sys_apt.ROCM_PACKAGE).
Must not: read apt's other reports (sys_apt.py) or dpkg's (sys_dpkg.py).
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.sys_apt import ROCM_PACKAGE
from rocmforge.triage.rule import LineView, Reading, Rule, rx

# apt names each dependency it cannot meet: "<pkg> : Depends: <dep> (= <version>) but
# <other> is to be installed".


# apt prints the package once; its further dependencies follow on lines indented to the
# same column with no "<pkg> :" (Debian/apt apt-private/private-output.cc, ShowBroken).
_APT_BROKEN_HEAD = re.compile(r"^(?P<pkg>[\w.+-]+)(?::\w+)? : (?:Pre)?Depends: ")


def _apt_rocm_pin(match: re.Match[str], view: LineView) -> Reading | None:
    dep, want, other = match.group("dep"), match.group("want"), match.group("other")
    pkg = match.group("pkg") or ""
    if not pkg:
        if not view.indented:
            return None
        heads = [h for h in map(_APT_BROKEN_HEAD.match, reversed(view.previous)) if h]
        if not heads:
            return None
        pkg = heads[0].group("pkg")
    if not (ROCM_PACKAGE.match(dep) or ROCM_PACKAGE.match(pkg)):
        return None
    return Reading(
        subject=dep,
        cause=f"apt cannot install ROCm: unmet dependencies ({pkg} needs "
              f"{dep} = {want}, but apt chose {dep} {other}): another repository, usually "
              "the distribution's own ROCm packages, offers a version of the same name that "
              "sorts above AMD's repository's, so the exact-version dependencies fail",
        fix=f"remove the distribution's {dep} (and the other ROCm packages it brought: `apt "
            f"list --installed | grep -i rocm`), and prefer AMD's repository with an apt pin "
            "(/etc/apt/preferences.d: Pin: origin repo.radeon.com, Pin-Priority: 600), then "
            "install again")


def _apt_resolver_installed_pin(match: re.Match[str], view: LineView) -> Reading | None:
    pkg, dep, want = match.group("pkg"), match.group("dep"), match.group("want")
    current, install = match.group("current"), match.group("install") or ""
    if current == "none" or current == want or install == want:
        return None  # nothing installed in the way, or apt would install the pinned one
    if not (ROCM_PACKAGE.match(dep) or ROCM_PACKAGE.match(pkg)):
        return None
    return Reading(
        subject=dep,
        cause=f"apt cannot install {pkg}: it needs {dep} = {want}, but {dep} {current} is "
              "already installed, from another repository (usually the distribution's own "
              "ROCm packages, whose version strings sort above AMD's), and apt's problem "
              "resolver will not replace it, so the exact-version dependency stays broken",
        fix=f"remove the installed {dep} (`sudo apt remove {dep}`, and the distribution's "
            "other ROCm packages: `apt list --installed | grep -i rocm`), prefer AMD's "
            "repository with an apt pin (/etc/apt/preferences.d: Pin: origin repo.radeon.com, "
            "Pin-Priority: 600), then install again")


RULES: tuple[Rule, ...] = (
    Rule(id="apt-rocm-unmet-dependency", klass="rocm-install",
         triggers=("is to be installed",),
         pattern=rx(r"^(?:(?P<pkg>[\w.+-]+) : )?(?:Pre)?Depends: (?P<dep>[\w.+-]+) \(= "
                     r"(?P<want>[^)]+)\) but (?P<other>\S+) is (?:to be )?installed"),
         read=_apt_rocm_pin, source="apt's unmet-dependency report (apt-private/"
         "private-output.cc: ioprintf 'but %s is to be installed' / 'but %s is installed' "
         "after '<pkg> : Depends: <dep> (= <ver>)'; a package's further dependencies on indented "
         "lines without '<pkg> :', Debian/apt@6b128124271e94bdb0f4e7850d9286170d712b04:"
         "apt-private/private-output.cc ShowBroken); ROCm/ROCm#1899"),
    Rule(id="apt-rocm-resolver-installed-pin", klass="rocm-install",
         triggers=("Broken ",),
         pattern=rx(r"^Broken (?P<pkg>[\w.+-]+)(?::[\w-]+)? (?:Pre)?Depends on "
                    r"(?P<dep>[\w.+-]+)(?::[\w-]+)? < (?P<current>\S+)(?: -> (?P<install>\S+))?"
                    r"(?: \| \S+)? @\w+ [^>]*> \(= (?P<want>[^)]+)\)"),
         read=_apt_resolver_installed_pin,
         source="apt's problem resolver trace (Debian/apt@6b128124271e94bdb0f4e7850d9286170d712b04"
         ":apt-pkg/algorithms.cc 'Broken ' << APT::PrettyDep; apt-pkg/prettyprinters.cc: "
         "'<pkg> Depends on <dep> < <current> [-> <install>] [| <candidate>] @<state> "
         "<marks> > (= <version>)'); ROCm/rocm-install-on-linux#583"),
)
