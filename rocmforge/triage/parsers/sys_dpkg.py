"""Installing ROCm's packages with dpkg: dpkg's own reports (a file two packages ship, a
package's maintainer script failing, a file that is not a .deb, a package given to `dpkg -i`
without the packages it depends on).

Owns: these dpkg message families (and apt's wording of a file that is not a .deb), read only
where the package, the file or its path is ROCm's (sys_apt.ROCM_PACKAGE). Must not: read
files, run programs or pick between findings (the engine does). apt's own reports are
sys_apt.py's.
"""

from __future__ import annotations

import re

from rocmforge.triage.parsers.sys_apt import APT_SOURCE, ROCM_PACKAGE
from rocmforge.triage.rule import LineView, Reading, Rule, rx

_ARCHIVE = re.compile(r"error processing archive (?P<deb>\S+)")


def _file_overwrite(match: re.Match[str], view: LineView) -> Reading | None:
    path, other = match.group("path"), match.group("other")
    archive = next((a for a in map(_ARCHIVE.search, reversed(view.previous)) if a), None)
    new = re.split(r"[\\/]", archive.group("deb"))[-1].split("_")[0] if archive else ""
    if not ("/rocm" in path or ROCM_PACKAGE.match(other) or ROCM_PACKAGE.match(new)):
        return None
    incoming = new or "the package being unpacked"
    return Reading(
        subject=other,
        cause=f"dpkg refused to unpack {incoming}: it ships {path}, which the installed "
              f"package {other} owns already; two packages that ship the same file (ROCm "
              "packages of two releases, or a distribution's ROCm package beside AMD's) "
              "cannot be installed together",
        fix=f"remove the package that owns the file first: `sudo apt-get remove {other}` "
            f"(`dpkg -S {path}` names the owner), then install again; mix no distribution "
            "ROCm packages with AMD's repository")


def _not_a_deb(match: re.Match[str], view: LineView) -> Reading | None:
    path = match.group("path") or match.group("path2")
    name = re.split(r"[\\/]", path)[-1]
    if not ROCM_PACKAGE.match(name):
        return None
    return Reading(
        subject=name,
        cause=f"{name} is not a Debian package (no 'ar' archive signature): the download "
              "saved something else under that name, such as the HTML error page of a "
              "wrong URL or of a proxy, or an interrupted transfer",
        fix=f"look at what was saved (`file {name}`, `head -c 300 {name}`), download it "
            "again from the URL AMD's install guide gives for this release and distribution "
            "(a 404 there means the URL is wrong), then install the new file")


_DEPENDS_HOWEVER = re.compile(r"^(?P<pkg>[\w.+-]+) (?:pre-)?depends on (?P<dep>[\w.+-]+)"
                              r"(?: \([^)]*\))?; however:")


def _dpkg_dependency_missing(match: re.Match[str], view: LineView) -> Reading | None:
    dep = match.group("dep")
    head = next((h for h in map(_DEPENDS_HOWEVER.match, reversed(view.previous)) if h), None)
    if head is None or head.group("dep") != dep:
        return None  # the line that says whose dependency it is was cut off
    pkg = head.group("pkg")
    if not (ROCM_PACKAGE.match(pkg) or ROCM_PACKAGE.match(dep)):
        return None
    return Reading(
        subject=dep,
        cause=f"dpkg unpacked {pkg} but cannot configure it: it depends on {dep}, which "
              "is not installed; `dpkg -i` installs only the files it is given and does not "
              "fetch dependencies",
        fix=f"let apt resolve the dependencies: `sudo apt-get install -f` (or install the "
            f".deb with `sudo apt-get install ./<file>.deb`, or `sudo apt-get install "
            f"{dep}`) with AMD's repository for this distribution release configured")


def _maintainer_script(match: re.Match[str], view: LineView) -> Reading | None:
    pkg, script = match.group("pkg"), match.group("script")
    if not ROCM_PACKAGE.match(pkg):
        return None
    return Reading(
        subject=pkg,
        cause=f"dpkg could not finish installing {pkg}: its {script} script exited with "
              f"status {match.group('status')}, so {pkg} and every package that depends on "
              "it stay unconfigured ('dependency problems - leaving unconfigured'); the "
              "script's own output above this line says why (for amdgpu-dkms: DKMS "
              "building the kernel module)",
        fix="read the script's output above (for amdgpu-dkms the DKMS make.log it names), "
            "fix that cause, then finish the install with `sudo dpkg --configure -a`; or "
            f"remove {pkg} (`sudo apt-get remove {pkg}`) when it is not needed")


RULES: tuple[Rule, ...] = (
    Rule(id="dpkg-rocm-file-overwrite", klass="rocm-install",
         triggers=("trying to overwrite",),
         pattern=rx(r"trying to overwrite '(?P<path>[^']+)', which is also in package "
                    r"(?P<other>[\w.+-]+)(?::\w+)?"),
         read=_file_overwrite,
         source="guillemj/dpkg@c5efef926d16a72fd9270c8efceeba8872419292:src/main/archives.c "
         "('trying to overwrite '%s', which is also in package %s (%s)'), src/main/errors.c "
         "('error processing archive %s'); dpkg 1.21.22 here (make/devsys6.sh)"),
    Rule(id="dpkg-rocm-not-a-debian-archive", klass="rocm-install",
         triggers=("is not a Debian format archive", "Could not read meta data from"),
         pattern=rx(r"(?:^dpkg-deb: error: '(?P<path>[^']+)' is not a Debian format archive|"
                    r"^E: Could not read meta data from (?P<path2>\S+\.deb))"),
         read=_not_a_deb,
         source="guillemj/dpkg@c5efef926d16a72fd9270c8efceeba8872419292:src/deb/extract.c "
         "('%s' is not a Debian format archive); " + APT_SOURCE + "apt-pkg/contrib/arfile.cc "
         "('Invalid archive signature'), apt-pkg/deb/debindexfile.cc ('Could not read meta "
         "data from %s'); dpkg 1.21.22 and apt 2.6.1 here (make/devsys6.sh)"),
    Rule(id="dpkg-rocm-dependency-not-installed", klass="rocm-install",
         triggers=("is not installed.",),
         pattern=rx(r"^Package (?P<dep>[\w.+-]+)(?::\w+)? is not installed\.$"),
         read=_dpkg_dependency_missing,
         source="guillemj/dpkg@c5efef926d16a72fd9270c8efceeba8872419292:src/main/"
         "packages.c ('; however:', '  Package %s is not installed.'), src/main/configure.c "
         "('dependency problems prevent configuration of %s'); dpkg 1.21.22 here "
         "(make/devsys6.sh)"),
    # The lock names no package: read only in a log that installs ROCm (amdgpu-install, AMD's
    # repository or source list, or an install command naming ROCm's packages).
    # Tier 2: the script's own error (a DKMS build, rocm_driver.py) is the better reading.
    Rule(id="dpkg-rocm-maintainer-script-failed", klass="rocm-install", tier=2,
         triggers=("script subprocess",),
         pattern=rx(r"(?:installed|old|new) (?P<pkg>[\w.+-]+)(?::\w+)? package "
                    r"(?P<script>(?:pre|post)-(?:installation|removal)) (?:maintainer )?"
                    r"script subprocess (?:returned error|failed with) exit status "
                    r"(?P<status>\d+)"),
         read=_maintainer_script,
         source="guillemj/dpkg@c5efef926d16a72fd9270c8efceeba8872419292:src/main/script.c "
         "('old %s package %s maintainer script'), lib/dpkg/subproc.c ('%s subprocess failed "
         "with exit status %d'); dpkg 1.21.22 here prints 'installed %s package "
         "post-installation script subprocess returned error exit status %d' "
         "(make/devsys6.sh)"),
)
