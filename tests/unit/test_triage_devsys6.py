"""Installing ROCm with apt, dpkg, wget and curl (issue 40, devsys6): a dependency no
repository offers, a dependency apt will not install, a package apt cannot find, a repository
without a Release file or with an unknown key, a file two packages ship, a package's
maintainer script failing, a missing .deb on apt's command line, and a 404 from AMD's server.
Each text is what apt 2.6.1, dpkg 1.21.22 (and newer dpkg's wording), wget 1.21.3 or curl
7.88.1 prints (tests/failures/make/devsys6.sh), with the values the reading must take out of
it, and the look-alikes (other vendors' packages, other servers, warnings apt recovers from,
echoed command lines) that must claim nothing."""

from __future__ import annotations

import pytest

from rocmforge.triage import explain_text

_UNMET = """The following packages have unmet dependencies:
 rocm-hip-runtime : Depends: hsa-rocr (= 1.14.0.60200-66~22.04) but it is not going to \
be installed
                    Depends: libpython3.10 but it is not installable
E: Unable to correct problems, you have held broken packages.
"""

_NOT_GOING = """The following packages have unmet dependencies:
 rocm-hip-libraries : Depends: hsa-rocr (= 1.13.0.60100-82~22.04) but it is not going to \
be installed
E: Unable to correct problems, you have held broken packages.
"""

_NOT_INSTALLABLE_DEP_ROCM = """The following packages have unmet dependencies:
 some-app : Depends: rocblas (>= 4.0) but it is not installable
E: Unable to correct problems, you have held broken packages.
"""

_LOCATE = """Reading package lists...
Building dependency tree...
E: Unable to locate package rocm-hip-sdk
"""

_NO_RELEASE = """Err:2 https://repo.radeon.com/rocm/apt/6.9 noble Release
  404  Not Found [IP: 1.2.3.4 443]
E: The repository 'https://repo.radeon.com/rocm/apt/6.9 noble Release' does not have a \
Release file.
"""

_NO_PUBKEY = """W: GPG error: https://repo.radeon.com/rocm/apt/6.2 jammy InRelease: The \
following signatures couldn't be verified because the public key is not available: NO_PUBKEY \
9386B48A1A693C5C
E: The repository 'https://repo.radeon.com/rocm/apt/6.2 jammy InRelease' is not signed.
"""

_OVERWRITE = """dpkg: error processing archive \
/var/cache/apt/archives/hipcc_1.1.1.60200-66~22.04_amd64.deb (--unpack):
 trying to overwrite '/usr/bin/hipcc', which is also in package hipcc5 5.2.3-12
"""

# dpkg 1.22's wording puts the version in parentheses.
_OVERWRITE_NEW = """dpkg: error processing archive ./rocprim-dev_3.2.0_all.deb (--install):
 trying to overwrite '/opt/rocm-6.2.0/include/hipcub/hipcub.hpp', which is also in package \
hipcub-dev (3.2.0)
"""

_POSTINST = """Setting up amdgpu-dkms (1:6.8.5.60200-2009582.22.04) ...
dpkg: error processing package amdgpu-dkms (--configure):
 installed amdgpu-dkms package post-installation script subprocess returned error exit status 10
dpkg: dependency problems prevent configuration of rocm-hip-runtime:
"""

# Newer dpkg (src/main/script.c + lib/dpkg/subproc.c) words the same failure this way.
_POSTINST_NEW = """dpkg: error processing package rocm-core (--configure):
 old rocm-core package post-installation maintainer script subprocess failed with exit \
status 1
"""

_UNSUPPORTED = """$ sudo apt-get install ./amdgpu-install_6.2.60200-1_all.deb
Reading package lists...
E: Unsupported file ./amdgpu-install_6.2.60200-1_all.deb given on commandline
"""

_WGET = """--2026-12-05 17:45:36--  https://repo.radeon.com/amdgpu-install/6.2/ubuntu/noble/\
amdgpu-install_6.2.60200-1_all.deb
Resolving repo.radeon.com (repo.radeon.com)... 1.2.3.4
Connecting to repo.radeon.com (repo.radeon.com)|1.2.3.4|:443... connected.
HTTP request sent, awaiting response... 404 Not Found
2026-12-05 17:45:36 ERROR 404: Not Found.
"""

_CURL = """$ curl -fLO https://repo.radeon.com/amdgpu-install/6.2/ubuntu/noble/\
amdgpu-install_6.2.60200-1_all.deb
  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current
                                 Dload  Upload   Total   Spent    Left  Speed
  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0
curl: (22) The requested URL returned error: 404
"""

_NOT_A_DEB = """dpkg-deb: error: 'amdgpu-install_6.2.60200-1_all.deb' is not a Debian format \
archive
dpkg: error processing archive amdgpu-install_6.2.60200-1_all.deb (--install):
"""

_APT_NOT_A_DEB = """E: Invalid archive signature
E: Could not read meta data from /home/u/rocm-core_6.2.0.60200-66~22.04_amd64.deb
"""

_DPKG_DEPENDS = """dpkg: dependency problems prevent configuration of hsa-rocr:
 hsa-rocr depends on libdrm-amdgpu-amdgpu1 (>= 1:2.4.120); however:
  Package libdrm-amdgpu-amdgpu1 is not installed.
"""

_LOCK = """$ sudo amdgpu-install --usecase=rocm
E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1804 (unattended-upgr)
N: Be aware that removing the lock file is not a solution and may break your system.
E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process \
using it?
"""


@pytest.mark.parametrize(("text", "subject", "rule", "words"), [
    (_UNMET, "libpython3.10", "apt-rocm-dependency-not-installable",
     ("rocm-hip-runtime", "apt-cache policy libpython3.10", "lsb_release -cs")),
    (_NOT_GOING, "hsa-rocr", "apt-rocm-dependency-not-going-to-be-installed",
     ("rocm-hip-libraries", "sudo apt-get install hsa-rocr")),
    (_NOT_INSTALLABLE_DEP_ROCM, "rocblas", "apt-rocm-dependency-not-installable",
     ("some-app",)),
    ("E: Package 'libamdhip64-5' has no installation candidate\n", "libamdhip64-5",
     "apt-rocm-no-installation-candidate", ("apt-cache policy libamdhip64-5",)),
    ("$ sudo amdgpu-install --usecase=rocm\nE: dpkg was interrupted, you must manually run "
     "'sudo dpkg --configure -a' to correct the problem.\n", "dpkg",
     "apt-dpkg-interrupted-rocm-install", ("sudo dpkg --configure -a",)),
    (_LOCATE, "rocm-hip-sdk", "apt-rocm-unable-to-locate-package", ("apt-cache search rocm",)),
    (_NO_RELEASE, "noble", "apt-rocm-repository-no-release-file",
     ("https://repo.radeon.com/rocm/apt/6.9/dists/",)),
    (_NO_PUBKEY, "https://repo.radeon.com/rocm/apt/6.2", "apt-rocm-repository-no-pubkey",
     ("NO_PUBKEY 9386B48A1A693C5C", "signed-by=")),
    (_OVERWRITE, "hipcc5", "dpkg-rocm-file-overwrite",
     ("/usr/bin/hipcc", "hipcc", "sudo apt-get remove hipcc5")),
    (_OVERWRITE_NEW, "hipcub-dev", "dpkg-rocm-file-overwrite", ("rocprim-dev",)),
    (_POSTINST, "amdgpu-dkms", "dpkg-rocm-maintainer-script-failed",
     ("status 10", "post-installation", "sudo dpkg --configure -a")),
    (_POSTINST_NEW, "rocm-core", "dpkg-rocm-maintainer-script-failed", ("status 1",)),
    (_UNSUPPORTED, "amdgpu-install_6.2.60200-1_all.deb", "apt-rocm-unsupported-file",
     ("./amdgpu-install_6.2.60200-1_all.deb",)),
    (_WGET, "amdgpu-install_6.2.60200-1_all.deb", "wget-amd-download-not-found",
     ("wget got HTTP 404", "https://repo.radeon.com/amdgpu-install/6.2/ubuntu/")),
    (_CURL, "amdgpu-install_6.2.60200-1_all.deb", "curl-amd-download-not-found",
     ("curl got HTTP 404",)),
    (_LOCK, "/var/lib/dpkg/lock-frontend", "apt-lock-held-rocm-install",
     ("process 1804 (unattended-upgr)", "ps -p 1804")),
    (_NOT_A_DEB, "amdgpu-install_6.2.60200-1_all.deb", "dpkg-rocm-not-a-debian-archive",
     ("HTML", "file amdgpu-install_6.2.60200-1_all.deb")),
    (_APT_NOT_A_DEB, "rocm-core_6.2.0.60200-66~22.04_amd64.deb",
     "dpkg-rocm-not-a-debian-archive", ("head -c 300",)),
    (_DPKG_DEPENDS, "libdrm-amdgpu-amdgpu1", "dpkg-rocm-dependency-not-installed",
     ("hsa-rocr", "sudo apt-get install -f")),
])
def test_family_reads_its_values(text: str, subject: str, rule: str,
                                 words: tuple[str, ...]) -> None:
    d = explain_text(text, step="install")
    assert (d.klass, d.subject, d.rule) == ("rocm-install", subject, rule)
    for word in words:
        assert word in d.cause + " " + d.fix, word


@pytest.mark.parametrize(("text", "venv"), [
    ("bash: line 1: ./.venv/bin/pip: cannot execute: required file not found\n", "./.venv"),
    ("bash: /home/u/rocm-venv/bin/torchrun: cannot execute: required file not found\n",
     "/home/u/rocm-venv"),
    # Newer bash names the interpreter.
    ("bash: /srv/new/venv/bin/pip: /srv/old/venv/bin/python3: bad interpreter: No such file "
     "or directory\n", "/srv/old/venv"),
])
def test_a_moved_venv_reads_its_folder(text: str, venv: str) -> None:
    d = explain_text(text, step="build-requirements")
    assert (d.klass, d.rule.startswith("venv-script-")) == ("python-packaging", True)
    assert f"venv --clear {venv}`" in d.fix


@pytest.mark.parametrize("text", [
    # A program outside a venv: a missing ELF interpreter or a script with Windows line ends.
    "bash: ./build_rocm.sh: cannot execute: required file not found\n",
    "bash: ./tools/amd_build/build_amd.py: /usr/bin/python^M: bad interpreter: No such file "
    "or directory\n",
    "bash: ./.venv/bin/pip: /usr/bin/env^M: bad interpreter: No such file or directory\n",
    "bash: /usr/local/bin/pip: /usr/bin/python3.8: bad interpreter: No such file or "
    "directory\n",
])
def test_shell_look_alikes_outside_a_venv_claim_nothing(text: str) -> None:
    assert explain_text(text, step="build").klass is None


def test_a_package_no_repository_offers_wins_over_the_first_level() -> None:
    # Both lines of one report: the 'not installable' one names what is really missing.
    d = explain_text(_UNMET, step="install")
    assert d.rule == "apt-rocm-dependency-not-installable"
    assert explain_text(_NOT_GOING, step="install").rule == \
        "apt-rocm-dependency-not-going-to-be-installed"


@pytest.mark.parametrize("text", [
    # Another vendor's packages in apt's same report.
    """The following packages have unmet dependencies:
 nvidia-driver-550 : Depends: libnvidia-gl-550 but it is not installable
                     Depends: nvidia-dkms-550 but it is not going to be installed
E: Unable to correct problems, you have held broken packages.
""",
    # A continuation line whose package line above is cut off: whose dependency is unknown.
    "                    Depends: libpython3.10 but it is not installable\n",
    # The words in an echoed command, not apt's report.
    "$ grep 'rocm-hip-runtime : Depends: hsa-rocr but it is not installable' apt.log\n",
    "E: Unable to locate package nvidia-cuda-toolkit\n",
    "E: Package 'nvidia-driver-550' has no installation candidate\n",
    "E: Package 'librocksdb8.9' has no installation candidate\n",
    # apt show's warning for a name it cannot find, not an install that failed.
    "W: Unable to locate package rocm-hip-sdk\n",
    "E: The repository 'http://ppa.launchpad.net/deadsnakes/ppa/ubuntu noble Release' does "
    "not have a Release file.\n",
    # A GPG warning for AMD's repository that apt recovers from (no error follows).
    "W: GPG error: https://repo.radeon.com/rocm/apt/6.2 jammy InRelease: The following "
    "signatures couldn't be verified because the public key is not available: NO_PUBKEY "
    "9386B48A1A693C5C\n",
    "W: GPG error: https://download.docker.com/linux/ubuntu jammy InRelease: The following "
    "signatures couldn't be verified because the public key is not available: NO_PUBKEY "
    "7EA0A9C3F273FCD8\nE: The repository 'https://download.docker.com/linux/ubuntu jammy "
    "InRelease' is not signed.\n",
    "dpkg: error processing archive /tmp/libfoo-dev_2.0_amd64.deb (--install):\n"
    " trying to overwrite '/usr/include/foo.h', which is also in package libfoo1-dev 1.0\n",
    " installed nvidia-dkms-550 package post-installation script subprocess returned error "
    "exit status 10\n",
    "E: Unsupported file ./cuda-keyring_1.1-1_all.deb given on commandline\n",
    "dpkg-deb: error: 'cuda-keyring_1.1-1_all.deb' is not a Debian format archive\n",
    # A dependency that is there but not configured yet: the failure is the other package's.
    " rocm-dkms-user depends on amdgpu-dkms; however:\n"
    "  Package amdgpu-dkms is not configured yet.\n",
    # The line without the one above it that says whose dependency it is.
    "  Package libdrm-amdgpu-amdgpu1 is not installed.\n",
    " libfoo depends on libbar1; however:\n  Package libbar1 is not installed.\n",
    # The lock in a log that installs nothing of ROCm.
    "$ sudo apt-get install -y build-essential\n"
    "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1804 (apt)\n",
    "$ sudo apt-get install -y git\nE: dpkg was interrupted, you must manually run 'dpkg "
    "--configure -a' to correct the problem.\n",
    "E: Conflicting values set for option Signed-By regarding source "
    "https://download.docker.com/linux/ubuntu/ jammy: /etc/apt/keyrings/docker.gpg != "
    "/usr/share/keyrings/docker.gpg\n",
    # A 404 from another server.
    "--2026-12-05 17:45:36--  https://github.com/Kitware/CMake/releases/download/v3.31.0/x\n"
    "HTTP request sent, awaiting response... 404 Not Found\n"
    "2026-12-05 17:45:36 ERROR 404: Not Found.\n",
    # curl's 404 with no command line to say which URL.
    "curl: (22) The requested URL returned error: 404\n",
    "$ curl -fLO https://example.com/rocm-6.2.tar.gz\n"
    "curl: (22) The requested URL returned error: 404\n",
])
def test_look_alikes_claim_nothing(text: str) -> None:
    assert explain_text(text, step="install").klass is None
