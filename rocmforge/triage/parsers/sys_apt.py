"""Installing ROCm's packages with apt: apt's own reports when AMD's repository or its
packages cannot be installed (a dependency no repository offers or apt will not install, a
package apt cannot find or has no candidate for, a repository without a Release file, listed
twice or signed by an unknown key, a missing .deb on its command line, its lock held, dpkg
left half-way).

Owns: these apt message families, read only where the package, the file or the repository
URL is ROCm's (the same words about another vendor's packages claim nothing), and the
ROCm package-name pattern sys_dpkg.py reads too. Must not: read files, run programs or pick
between findings (the engine does). apt's exact-version conflict ('but <version> is to be
installed') is rocm_install.py's; dpkg's own reports are sys_dpkg.py's.
"""
from __future__ import annotations

import re

from rocmforge.triage.rule import LineView, Reading, Rule, rx

# A package name of ROCm or of AMD's driver stack, as AMD's repositories name them (rocm-*,
# rocblas, hipcub-dev, hsa-rocr, miopen-hip, rccl, amdgpu-dkms, comgr, libdrm-amdgpu-*...), or
# as distributions name their ROCm libraries (libamdhip64-5, librocblas0...).
ROCM_PACKAGE = re.compile(r"(?i)^(?:rocm|roc(?!k)[a-z]|hip|hsa|miopen|rccl|amdgpu|amd-smi|"
                          r"comgr|composablekernel|migraphx|mivisionx|rpp|half\b|"
                          r"libdrm\d?-amdgpu|lib(?:amdhip|hsa|hip|roc(?!k)|miopen|rccl))")
# AMD's repositories: repo.radeon.com, or a mirror that keeps its layout (/rocm/apt/<ver>,
# /amdgpu/<ver>/ubuntu).
_ROCM_REPO = re.compile(r"(?i)repo\.radeon\.com|/rocm/(?:apt|zyp|rhel|el|sles)\b|/amdgpu/")
_APT_HEAD = re.compile(r"^(?P<pkg>[\w.+-]+) : (?:Pre)?Depends: ")

# A log that installs ROCm: amdgpu-install, AMD's repository or source list, or an install
# command naming ROCm's packages (for apt's messages that name no package).
_ROCM_INSTALL_LOG = re.compile(r"(?i)amdgpu-install|repo\.radeon\.com|sources\.list\.d/"
                               r"(?:rocm|amdgpu)|\b(?:apt|apt-get|dnf|yum|zypper)\b.*\binstall"
                               r"\b.*\b(?:rocm|hip|amdgpu|hsa|miopen|rccl)")

APT_SOURCE = "Debian/apt@6b128124271e94bdb0f4e7850d9286170d712b04:"


def _apt_owner(match: re.Match[str], view: LineView) -> str:
    """The package whose dependency the line names: on the line itself, or (on a continuation
    line of the same package) on the nearest line above that starts with '<pkg> : Depends:'."""
    if match.group("pkg"):
        return match.group("pkg")
    for line in reversed(view.previous):
        head = _APT_HEAD.match(line)
        if head:
            return head.group("pkg")
        if not line.startswith(("Depends: ", "PreDepends: ", "Recommends: ")):
            break
    return ""


def _not_installable(match: re.Match[str], view: LineView) -> Reading | None:
    pkg, dep = _apt_owner(match, view), match.group("dep")
    if not (ROCM_PACKAGE.match(pkg) or ROCM_PACKAGE.match(dep)):
        return None  # another vendor's or the distribution's own packages
    return Reading(
        subject=dep,
        cause=f"apt cannot install {pkg}: it depends on {dep}, which no repository "
              "configured here offers (\"not installable\"): AMD's repository was added for "
              "another release of the distribution than this one (its packages name that "
              "release's libraries), or the repository that ships "
              f"{dep} is not configured",
        fix="add AMD's repository for this distribution release (the codename in "
            "/etc/apt/sources.list.d/rocm.list must be the one `lsb_release -cs` prints; "
            "amdgpu-install for this release writes it), run `sudo apt-get update`, and "
            f"check with `apt-cache policy {dep}` that some repository offers {dep}")


def _not_going_to_be_installed(match: re.Match[str], view: LineView) -> Reading | None:
    pkg, dep = _apt_owner(match, view), match.group("dep")
    if not (ROCM_PACKAGE.match(pkg) or ROCM_PACKAGE.match(dep)):
        return None
    wanted = f"{dep} ({match.group('want')})" if match.group("want") else dep
    return Reading(
        subject=dep,
        cause=f"apt cannot install {pkg}: it needs {wanted}, and apt will not install "
              f"{dep} (\"not going to be installed\"): no version of {dep} the repositories "
              "offer fits (packages of two ROCm releases mixed, or the distribution's), or "
              f"{dep}'s own dependencies cannot be met; apt shows only this first level",
        fix=f"`apt-cache policy {dep}` shows the versions the repositories offer and "
            f"`sudo apt-get install {dep}` (with the version the line names) prints the next "
            "level; configure one ROCm release's repository for this distribution release "
            "and remove older ROCm packages (`apt list --installed | grep -i rocm`), then "
            "install again")


def _unable_to_locate(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name")
    if not ROCM_PACKAGE.match(name):
        return None
    return Reading(
        subject=name,
        cause=f"apt found no package {name} in the repositories it knows: AMD's ROCm "
              "repository is not configured, `apt-get update` did not run (or failed) after "
              "adding it, or this ROCm release has no package of that name",
        fix="add AMD's ROCm repository for this distribution release (AMD's install guide, "
            "or amdgpu-install), run `sudo apt-get update` and read its errors, then look "
            f"the name up: `apt-cache search {name.split('-')[0]}`")


def _no_candidate(match: re.Match[str], view: LineView) -> Reading | None:
    name = match.group("name")
    if not ROCM_PACKAGE.match(name):
        return None
    return Reading(
        subject=name,
        cause=f"apt knows the name {name} (another package, or an older list, refers to it) "
              "but no repository configured here offers a version of it: AMD's repository "
              "that ships it is not configured (or not for this distribution release), or "
              "this ROCm release no longer has that package",
        fix=f"add AMD's repository for this distribution release and run `sudo apt-get "
            f"update`; `apt-cache policy {name}` shows which repositories offer it, and AMD's "
            "install guide for the ROCm release names the packages it has")


def _no_release_file(match: re.Match[str], view: LineView) -> Reading | None:
    url, suite = match.group("url"), match.group("suite")
    if not _ROCM_REPO.search(url):
        return None
    return Reading(
        subject=suite,
        cause=f"AMD's repository {url} has no '{suite}' release (its Release file "
              "is not there, HTTP 404): the ROCm or amdgpu version in the URL does not "
              f"exist, or that release was not built for the distribution release {suite}",
        fix="check the URL's version and codename against AMD's repository "
            f"(open {url}/dists/ in a browser) and the ROCm release's supported "
            "operating systems; write the codename that exists (or a ROCm release that "
            "supports this distribution) in the source list, then `sudo apt-get update`")


def _signed_by_conflict(match: re.Match[str], view: LineView) -> Reading | None:
    url = match.group("url")
    if not _ROCM_REPO.search(url):
        return None
    one, two = match.group("one"), match.group("two")
    return Reading(
        subject=url.rstrip("/"),
        cause=f"apt cannot read its source lists: AMD's repository {url} is listed twice "
              f"with different keys (signed-by={one} and signed-by={two}), so apt stops "
              "before doing anything",
        fix="keep one entry for the repository: `grep -rn radeon /etc/apt/sources.list "
            "/etc/apt/sources.list.d/` shows both; delete one file or line (and the key it "
            "names if no other entry uses it), then `sudo apt-get update`")


def _no_pubkey(match: re.Match[str], view: LineView) -> Reading | None:
    url, key = match.group("url"), match.group("key")
    if not _ROCM_REPO.search(url):
        return None
    return Reading(
        subject=url,
        cause=f"apt cannot verify AMD's repository {url}: NO_PUBKEY {key}, the key that "
              "signed it is not in the keyring the source list names (AMD's rocm.gpg.key not "
              "installed, installed elsewhere than its signed-by= path, or an old key), so "
              "apt refuses the repository",
        fix="install AMD's key where the source list's signed-by= points (AMD's install "
            "guide: download https://repo.radeon.com/rocm/rocm.gpg.key, `gpg --dearmor` it "
            "into /etc/apt/keyrings/rocm.gpg), then `sudo apt-get update`")


def _unsupported_file(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path")
    name = re.split(r"[\\/]", path)[-1]
    if not ROCM_PACKAGE.match(name):
        return None
    return Reading(
        subject=name,
        cause=f"apt was given the file {path}, which is not there (or not a .deb): the "
              "package was not downloaded under that name in this folder (a download above "
              "failed, or it was saved under another release's file name)",
        fix="download the package for this distribution release from AMD's repository "
            "(AMD's install guide names the URL), check its name with `ls`, then install "
            "that file by its path: `sudo apt-get install ./<file>.deb`")


def _lock_held(match: re.Match[str], view: LineView) -> Reading | None:
    lock, pid, name = match.group("lock"), match.group("pid"), match.group("name")
    holder = f"process {pid} ({name})" if name else f"process {pid}"
    return Reading(
        subject=lock,
        cause=f"another package-manager run, {holder}, holds {lock}, so apt stopped before "
              "doing anything: nothing of ROCm was installed (on a freshly booted Ubuntu "
              "this is often unattended-upgrades; in a script, an apt started earlier)",
        fix=f"let that run finish (`ps -p {pid}` shows it), or stop it cleanly "
            "(`sudo systemctl stop unattended-upgrades`), then run the install again; do not "
            "delete the lock file")


def _dpkg_interrupted(match: re.Match[str], view: LineView) -> Reading | None:
    return Reading(
        subject="dpkg",
        cause="apt refuses to install anything: an earlier dpkg run stopped half-way (an "
              "install interrupted, or a package whose maintainer script failed, such as "
              "amdgpu-dkms's DKMS build), and its packages are still half-installed",
        fix="finish that run first: `sudo dpkg --configure -a`; if a package's script fails "
            "again, read its output (for amdgpu-dkms, DKMS's make.log) and fix it or remove "
            "that package (`sudo apt-get remove <package>`), then install ROCm again")


RULES: tuple[Rule, ...] = (
    Rule(id="apt-rocm-dependency-not-installable", klass="rocm-install",
         triggers=("but it is not installable",),
         pattern=rx(r"^(?:(?P<pkg>[\w.+-]+) : )?(?:Pre)?Depends: (?P<dep>[\w.+:-]+)"
                    r"(?: \([^)]*\))? but it is not installable"),
         read=_not_installable,
         source=APT_SOURCE + "apt-private/private-output.cc ('but it is not installable', "
         "after '<pkg> : Depends: <dep>'); apt 2.6.1 here (make/devsys6.sh)"),
    # Tier 2: apt's first level only; a 'not installable' line of the same report names the
    # package that no repository offers, the better reading.
    Rule(id="apt-rocm-dependency-not-going-to-be-installed", klass="rocm-install", tier=2,
         triggers=("but it is not going to be installed",),
         pattern=rx(r"^(?:(?P<pkg>[\w.+-]+) : )?(?:Pre)?Depends: (?P<dep>[\w.+:-]+)"
                    r"(?: \((?P<want>[^)]*)\))? but it is not going to be installed"),
         read=_not_going_to_be_installed,
         source=APT_SOURCE + "apt-private/private-output.cc ('but it is not going to be "
         "installed'); apt-pkg/algorithms.cc ('Unable to correct problems, you have held "
         "broken packages.'); apt 2.6.1 here (make/devsys6.sh)"),
    Rule(id="apt-rocm-unable-to-locate-package", klass="rocm-install",
         triggers=("Unable to locate package",),
         pattern=rx(r"^E: Unable to locate package (?P<name>[\w.+-]+)\s*$"),
         read=_unable_to_locate,
         source=APT_SOURCE + "apt-pkg/cacheset.cc ('Unable to locate package %s', an error; "
         "apt-private/private-show.cc's is a warning); apt 2.6.1 here (make/devsys6.sh)"),
    Rule(id="apt-rocm-no-installation-candidate", klass="rocm-install",
         triggers=("has no installation candidate",),
         pattern=rx(r"^E: Package '(?P<name>[\w.+-]+)(?::\w+)?' has no installation "
                    r"candidate"),
         read=_no_candidate,
         source=APT_SOURCE + "apt-private/private-cacheset.cc ('Package %s is not "
         "available, but is referred to by another package.', 'Package '%s' has no "
         "installation candidate'); apt 2.6.1 here (make/devsys6.sh)"),
    Rule(id="apt-rocm-repository-no-release-file", klass="rocm-install",
         triggers=("does not have a Release file",),
         pattern=rx(r"^E: The repository '(?P<url>\S+) (?P<suite>[\w.-]+)(?: \S+)? Release' "
                    r"does not have a Release file"),
         read=_no_release_file,
         source=APT_SOURCE + "apt-pkg/acquire-item.cc (InsecureType::NORELEASE, 'The "
         "repository '%s' does not have a Release file.'); apt 2.6.1 here (make/devsys6.sh)"),
    Rule(id="apt-rocm-repository-signed-by-conflict", klass="rocm-install",
         triggers=("Conflicting values set for option Signed-By",),
         pattern=rx(r"^E: Conflicting values set for option Signed-By regarding source "
                    r"(?P<url>\S+) \S+: (?P<one>\S+) != (?P<two>\S+)"),
         read=_signed_by_conflict,
         source=APT_SOURCE + "apt-pkg/deb/debmetaindex.cc ('Conflicting values set for "
         "option %s regarding source %s %s: %s != %s', Signed-By); apt 2.6.1 here "
         "(make/devsys6.sh)"),
    Rule(id="apt-rocm-repository-no-pubkey", klass="rocm-install",
         triggers=("NO_PUBKEY",),
         pattern=rx(r"^(?:W|E): GPG error: (?P<url>\S+) \S+ (?:In)?Release: .*public key is "
                    r"not available: NO_PUBKEY (?P<key>[0-9A-F]{8,40})"),
         read=_no_pubkey, requires=rx(r"^E: "),
         source=APT_SOURCE + "methods/gpgv.cc ('The following signatures couldn't be "
         "verified because the public key is not available:' and gpgv's NO_PUBKEY), "
         "apt-pkg/acquire-item.cc ('The repository '%s' is not signed.'); apt 2.6.1 here "
         "(make/devsys6.sh)"),
    Rule(id="apt-rocm-unsupported-file", klass="rocm-install",
         triggers=("given on commandline",),
         pattern=rx(r"^E: Unsupported file (?P<path>\S+) given on commandline"),
         read=_unsupported_file,
         source=APT_SOURCE + "apt-private/private-install.cc ('Unsupported file %s given on "
         "commandline': a path argument that is not an existing .deb, .dsc or folder); apt "
         "2.6.1 here (make/devsys6.sh)"),
    Rule(id="apt-lock-held-rocm-install", klass="rocm-install",
         triggers=("Could not get lock",),
         pattern=rx(r"^E: Could not get lock (?P<lock>\S+?)\.? It is held by process "
                    r"(?P<pid>\d+)(?: \((?P<name>[^)]*)\))?"),
         read=_lock_held,
         requires=_ROCM_INSTALL_LOG,
         source=APT_SOURCE + "apt-pkg/contrib/fileutl.cc ('Could not get lock %s. It is "
         "held by process %d (%s)'), apt-pkg/acquire.cc ('Unable to lock directory %s'), "
         "apt-pkg/deb/debsystem.cc (the dpkg frontend lock); apt 2.6.1 here "
         "(make/devsys6.sh)"),
    Rule(id="apt-dpkg-interrupted-rocm-install", klass="rocm-install",
         triggers=("dpkg was interrupted",),
         pattern=rx(r"^E: dpkg was interrupted, you must manually run '"),
         read=_dpkg_interrupted, requires=_ROCM_INSTALL_LOG,
         source=APT_SOURCE + "apt-pkg/deb/debsystem.cc ('dpkg was interrupted, you must "
         "manually run '%s' to correct the problem.', when dpkg's updates folder is not "
         "empty); apt 2.6.1 here (make/devsys6.sh)"),
)
