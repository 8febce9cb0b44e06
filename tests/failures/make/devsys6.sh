#!/usr/bin/env bash
# d9 (devsys6): installing ROCm with apt and dpkg, and git's network failures, each made by the
# real apt-get (2.6.1 on Debian 12), dpkg and git on tiny inputs made here:
# - a package repository of empty packages named as AMD's (dpkg-deb, dpkg-scanpackages),
#   read by apt-get in a sandbox (-o Dir=...: its own sources, lists, status and cache;
#   -s simulates, nothing is installed) or served by a local HTTP server (python3 -m
#   http.server on 127.0.0.1) under AMD's layout /rocm/apt/<ver>;
# - dpkg --root=<a folder here> for the file conflict;
# - git against an unresolvable host (.invalid) and a closed port (127.0.0.1:9).
# The NO_PUBKEY case needs gpg (gnupg, not in .ci/run's list): skipped when absent.
# Nothing outside a temporary folder is touched. A few seconds. Writes rounds/d9/cases/.
# Two logs differ from run to run: the NO_PUBKEY key id (a fresh key each run; its case's
# answer names the repository, not the key) and the order of git's two "not our ref" lines
# (two processes writing to one stderr).
set -u
here=$(cd "$(dirname "$0")" && pwd); cases=$here/../rounds/d9/cases
t=$(mktemp -d)
srv=""
trap '[ -n "$srv" ] && kill "$srv"; rm -rf "$t"' EXIT
V=6.2.0.60200-66~22.04

# mkdeb <name> <version> <depends> [file]: an empty package, optionally shipping one file.
mkdeb() {
  local d=$t/src/$1-$2
  mkdir -p "$d/DEBIAN"
  printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: rf <rf@example.com>\n' \
    "$1" "$2" > "$d/DEBIAN/control"
  printf 'Description: test package\n' >> "$d/DEBIAN/control"
  [ -n "$3" ] && printf 'Depends: %s\n' "$3" >> "$d/DEBIAN/control"
  if [ -n "${4:-}" ]; then mkdir -p "$d/$(dirname "$4")"; echo x > "$d/$4"; fi
  dpkg-deb -Zgzip --build "$d" "$t/repo/$1_$2_all.deb" >/dev/null
}
mkdir -p "$t/repo"
mkdeb rocm-hip-runtime "$V" "hsa-rocr (= 1.14.0.60200-66~22.04), libpython3.10"
mkdeb hsa-rocr 1.14.0.60200-66~22.04 "libdrm-amdgpu-amdgpu1"
# Two ROCm releases in one repository: rocm-hip-libraries 6.2 needs rocm-core 6.2, its
# hsa-rocr (of 6.1) needs rocm-core 6.1 exactly.
mkdeb rocm-hip-libraries "$V" "hsa-rocr (= 1.13.0.60100-82~22.04), rocm-core (= $V)"
mkdeb hsa-rocr 1.13.0.60100-82~22.04 "rocm-core (= 6.1.0.60100-82~22.04)"
mkdeb rocm-core "$V" ""
mkdeb rocm-core 6.1.0.60100-82~22.04 ""
mkdeb hipcub-dev 3.2.0.60200-66~22.04 "" opt/rocm-6.2.0/include/hipcub/hipcub.hpp
mkdeb rocprim-dev 3.2.0.60200-66~22.04 "" opt/rocm-6.2.0/include/hipcub/hipcub.hpp
# A driver package whose post-installation script fails (exit 10), and one that needs it.
mkdeb amdgpu-dkms 1:6.8.5.60200-2009582.22.04 ""
printf '#!/bin/sh\nexit 10\n' > "$t/src/amdgpu-dkms-1:6.8.5.60200-2009582.22.04/DEBIAN/postinst"
chmod 755 "$t/src/amdgpu-dkms-1:6.8.5.60200-2009582.22.04/DEBIAN/postinst"
dpkg-deb -Zgzip --build "$t/src/amdgpu-dkms-1:6.8.5.60200-2009582.22.04" \
  "$t/amdgpu-dkms_6.8.5.60200-2009582.22.04_all.deb" >/dev/null
mkdeb rocm-dkms-user "$V" "amdgpu-dkms"
# MIOpen of 6.2 needs rocBLAS of 6.2; the repository has only 6.1's.
mkdeb miopen-hip 3.2.0.60200-66~22.04 "rocblas (>= 4.2.0.60200-66~22.04)"
mkdeb rocblas 4.1.0.60100-82~22.04 ""
mkdeb vendor-gpu-runtime 1.0-1 "libvendor-gpu-core1"
(cd "$t/repo" && dpkg-scanpackages -m . /dev/null > Packages 2>/dev/null)

# apt_ <name> <sources line or ""> <apt-get args...>: apt-get in sandbox <name>.
apt_() {
  local s=$t/apt-$1 src=$2; shift 2
  mkdir -p "$s/etc/apt/sources.list.d" "$s/etc/apt/preferences.d" "$s/etc/apt/apt.conf.d" \
    "$s/lists/partial" "$s/cache/archives/partial"
  : > "$s/status"
  printf '%s\n' "$src" > "$s/etc/apt/sources.list"
  apt-get -o Dir="$s" -o Dir::Etc="$s/etc/apt" -o Dir::State="$s" \
    -o Dir::State::Lists="$s/lists" -o Dir::State::status="$s/status" \
    -o Dir::Cache="$s/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@" 2>&1
}
# out <id>: stdin to the case's log, the temporary folder read as a user's.
out() { sed -e "s#$t#/tmp/work#g" > "$cases/$1.log"; }

local_repo="deb [trusted=yes] file:$t/repo ./"
apt_ local "$local_repo" update >/dev/null
{ echo '$ sudo apt-get install rocm-hip-runtime'
  apt_ local "$local_repo" install -s rocm-hip-runtime; } | out real-apt-rocm-dependency-not-installable
{ echo '$ sudo apt-get install rocm-hip-libraries'
  apt_ local "$local_repo" install -s rocm-hip-libraries; } \
  | out real-apt-rocm-exact-version-two-releases
{ echo '$ sudo apt-get install miopen-hip'
  apt_ local "$local_repo" install -s miopen-hip; } | out real-apt-rocm-dependency-version-not-offered
# A name hsa-rocr refers to that no repository here offers.
{ echo '$ sudo apt-get install libdrm-amdgpu-amdgpu1'
  apt_ local "$local_repo" install -s libdrm-amdgpu-amdgpu1; } \
  | out real-apt-rocm-no-installation-candidate
{ echo '$ sudo apt-get install vendor-gpu-runtime'
  apt_ local "$local_repo" install -s vendor-gpu-runtime; } \
  | out real-neg-apt-other-vendor-dependency-not-installable
# A dpkg run left half-way (a file in dpkg's updates folder): apt refuses before installing.
# This apt takes its locks (in the sandbox); its dpkg is /bin/false, so nothing can be run.
s=$t/apt-interrupted
mkdir -p "$s/etc/apt/preferences.d" "$s/lists/partial" "$s/cache/archives/partial" \
  "$s/dpkg/updates"
: > "$s/dpkg/status"; echo x > "$s/dpkg/updates/0001"
printf '%s\n' "$local_repo" > "$s/etc/apt/sources.list"
ai=(apt-get -o Dir="$s" -o Dir::Etc="$s/etc/apt" -o Dir::State="$s" -o Dir::State::Lists="$s/lists"
  -o Dir::State::status="$s/dpkg/status" -o Dir::Cache="$s/cache" -o APT::Sandbox::User=root
  -o Dir::Bin::dpkg=/bin/false)
"${ai[@]}" update >/dev/null 2>&1
{ echo '$ sudo apt-get install -y hipcub-dev'; "${ai[@]}" install -y hipcub-dev 2>&1; } \
  | out real-apt-rocm-dpkg-interrupted
# AMD's repository listed twice, each entry with its own signed-by key (no server needed:
# apt stops while it reads the lists).
s=$t/apt-twice
mkdir -p "$s/etc/apt/sources.list.d"
printf '%s\n' "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] \
https://repo.radeon.com/rocm/apt/6.2 jammy main" > "$s/etc/apt/sources.list.d/rocm.list"
{ echo "\$ echo 'deb [arch=amd64 signed-by=/usr/share/keyrings/rocm-archive-keyring.gpg]" \
    "https://repo.radeon.com/rocm/apt/6.2 jammy main' | sudo tee -a /etc/apt/sources.list"
  echo '$ sudo apt-get update'
  apt_ twice "deb [arch=amd64 signed-by=/usr/share/keyrings/rocm-archive-keyring.gpg] \
https://repo.radeon.com/rocm/apt/6.2 jammy main" update; } | out real-apt-rocm-signed-by-conflict
# No repository configured: AMD's never added.
apt_ none "" update >/dev/null
{ echo '$ sudo apt-get install rocm-hip-sdk'
  apt_ none "" install -s rocm-hip-sdk; } | out real-apt-rocm-unable-to-locate-package

# AMD's layout served over HTTP: ROCm 6.2 built for jammy only.
www=$t/www; dist=$www/rocm/apt/6.2/dists/jammy
mkdir -p "$dist/main/binary-amd64"
cp "$t/repo/Packages" "$dist/main/binary-amd64/"
{ printf 'Origin: test\nSuite: jammy\nCodename: jammy\nComponents: main\nArchitectures: amd64\n'
  printf 'SHA256:\n %s %s main/binary-amd64/Packages\n' \
    "$(sha256sum "$dist/main/binary-amd64/Packages" | cut -d' ' -f1)" \
    "$(stat -c%s "$dist/main/binary-amd64/Packages")"; } > "$dist/Release"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$www" > "$t/http.out" 2>&1 &
srv=$!
port=""
for _ in $(seq 50); do
  port=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$t/http.out"); [ -n "$port" ] && break; sleep 0.1
done
url="http://127.0.0.1:$port/rocm/apt/6.2"
{ echo "\$ echo 'deb [arch=amd64] $url noble main' | sudo tee /etc/apt/sources.list.d/rocm.list"
  echo '$ sudo apt-get update'
  apt_ noble "deb [arch=amd64] $url noble main" update; } \
  | sed -e "s#:$port/#:8080/#g" -e "s# $port\]# 8080]#g" | out real-apt-rocm-repository-no-release-file
# amdgpu-install's package for a codename the release does not have (only jammy here).
mkdir -p "$www/amdgpu-install/6.2/ubuntu/jammy" "$www/pub"
deb=amdgpu-install_6.2.60200-1_all.deb
cp "$t/repo/rocm-core_${V}_all.deb" "$www/amdgpu-install/6.2/ubuntu/jammy/$deb"
au="http://127.0.0.1:$port/amdgpu-install/6.2/ubuntu/noble/$deb"
# The server's port and wget's clock read as fixed values, so the logs do not change each run.
amd_port() { sed -e "s#127.0.0.1:$port#127.0.0.1:8080#g" -e "s#^\(--\)\?20[0-9-]* [0-9:]*#\12026-12-05 17:45:36#"; }
(cd "$t" && { echo "\$ wget $au"; wget "$au" 2>&1; }) | amd_port \
  | out real-wget-amdgpu-install-not-found
(cd "$t" && { echo "\$ sudo apt-get install ./$deb"; apt_ none "" install -s "./$deb"; }) \
  | out real-apt-amdgpu-install-unsupported-file
(cd "$t" && { echo "\$ curl -fLO $au"; curl -sS -fLO "$au" 2>&1; }) | amd_port \
  | out real-curl-amdgpu-install-not-found
# The same 404 for a file outside AMD's repository claims nothing.
(cd "$t" && { echo "\$ wget http://127.0.0.1:$port/pub/cmake-3.31.0.tar.gz"
  wget "http://127.0.0.1:$port/pub/cmake-3.31.0.tar.gz" 2>&1; }) | amd_port \
  | out real-neg-wget-other-download-not-found
# Another apt holds the lists' lock (a python3 here, holding it a few seconds).
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "w"); fcntl.lockf(f, fcntl.LOCK_EX); print("locked", flush=True)
time.sleep(5)' "$t/apt-noble/lists/lock" > "$t/lock.out" &
holder=$!
for _ in $(seq 50); do grep -q locked "$t/lock.out" && break; sleep 0.1; done
{ echo "\$ echo 'deb [arch=amd64] $url jammy main' | sudo tee /etc/apt/sources.list.d/rocm.list"
  echo '$ sudo apt-get update'
  apt_ noble "deb [arch=amd64] $url jammy main" -o Debug::NoLocking=0 update; } \
  | sed -e "s#:$port/#:8080/#g" -e "s#process $holder #process 4242 #" \
  | out real-apt-rocm-lock-held
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
if command -v gpg >/dev/null; then
  export GNUPGHOME=$t/gnupg; mkdir -m700 "$GNUPGHOME"
  gpg -q --batch --passphrase '' --quick-gen-key 'rocm test <t@example.com>' ed25519 sign never \
    2>/dev/null
  gpg -q --batch --clearsign -o "$dist/InRelease" "$dist/Release"
  { echo '$ sudo apt-get update'
    apt_ pubkey "deb [arch=amd64] $url jammy main" update; } \
    | sed -e "s#:$port/#:8080/#g" | out real-apt-rocm-repository-no-pubkey
fi

# dpkg: two packages ship the same file under /opt/rocm-6.2.0.
root=$t/root; mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info"
: > "$root/var/lib/dpkg/status"
dpkg_() { dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-not-root "$@" 2>&1; }
dpkg_ -i "$t/repo/hipcub-dev_3.2.0.60200-66~22.04_all.deb" >/dev/null
(cd "$t/repo" && { echo '$ sudo dpkg -i rocprim-dev_3.2.0.60200-66~22.04_all.deb'
  dpkg_ -i rocprim-dev_3.2.0.60200-66~22.04_all.deb; }) | out real-dpkg-rocm-file-overwrite

# git: no class fits a failed clone (no checkout class): triage must claim nothing.
(cd "$t" && { echo '$ git clone --recursive https://github.invalid/ROCm/pytorch'
  git clone --recursive https://github.invalid/ROCm/pytorch; } 2>&1) \
  | out real-neg-git-clone-could-not-resolve-host
(cd "$t" && { echo '$ git clone http://127.0.0.1:9/ROCm/pytorch.git'
  git clone http://127.0.0.1:9/ROCm/pytorch.git; } 2>&1) | out real-neg-git-clone-connection-refused
(cd "$t" && { echo '$ sudo dpkg -i amdgpu-dkms_6.8.5.60200-2009582.22.04_all.deb' \
  "rocm-dkms-user_${V}_all.deb"
  dpkg_ -i amdgpu-dkms_6.8.5.60200-2009582.22.04_all.deb "repo/rocm-dkms-user_${V}_all.deb"; }) \
  | sed -e 's#repo/##' | out real-dpkg-rocm-postinst-failed

# An HTML error page saved under the .deb's name (a wrong URL downloaded without --fail).
printf '<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n' \
  > "$t/$deb"
(cd "$t" && { echo "\$ sudo dpkg -i $deb"; dpkg_ -i "$deb"; }) | out real-dpkg-amdgpu-install-html-page
(cd "$t" && { echo "\$ sudo apt-get install ./$deb"; apt_ none "" install -s "./$deb"; }) \
  | out real-apt-amdgpu-install-html-page
# One ROCm .deb given to dpkg without the package it depends on.
(cd "$t/repo" && { echo '$ sudo dpkg -i hsa-rocr_1.14.0.60200-66~22.04_all.deb'
  dpkg_ -i hsa-rocr_1.14.0.60200-66~22.04_all.deb; }) | out real-dpkg-rocm-dependency-not-installed

# git: a submodule pinned to a commit its remote does not have (a local bare repository), and a
# checkout of a commit the clone does not have. No class fits either: triage claims nothing,
# though the path names composable_kernel.
g=$t/git
export GIT_AUTHOR_NAME=rf GIT_AUTHOR_EMAIL=rf@example.com GIT_COMMITTER_NAME=rf \
  GIT_COMMITTER_EMAIL=rf@example.com GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p "$g"
git init -q -b main "$g/sub" && git -C "$g/sub" commit -q --allow-empty -m sub
git clone -q --bare "$g/sub" "$g/sub.git"
git init -q -b main "$g/sup"
printf '[submodule "third_party/composable_kernel"]\n\tpath = third_party/composable_kernel\n\turl = ../sub.git\n' \
  > "$g/sup/.gitmodules"
git -C "$g/sup" add .gitmodules
git -C "$g/sup" update-index --add \
  --cacheinfo 160000,1111111111111111111111111111111111111111,third_party/composable_kernel
git -C "$g/sup" commit -q -m sup
git clone -q --bare "$g/sup" "$g/sup.git"
(cd "$g" && { echo '$ git clone --recursive /tmp/work/git/sup.git work'
  git -c protocol.file.allow=always clone --recursive sup.git work 2>&1; }) \
  | out real-neg-git-submodule-commit-not-on-remote
(cd "$g/sub" && { echo '$ git checkout 2222222222222222222222222222222222222222'
  git checkout 2222222222222222222222222222222222222222 2>&1; }) \
  | out real-neg-git-reference-is-not-a-tree

# A venv renamed after it was made: its pip's first line names the old folder's python.
python3 -m venv "$t/venv" >/dev/null && mv "$t/venv" "$t/.venv"
(cd "$t" && { echo '$ ./.venv/bin/pip install -r requirements.txt'
  bash -c './.venv/bin/pip install -r requirements.txt' 2>&1; }) \
  | out real-venv-moved-pip-required-file-not-found

