"""AOTriton, the attention kernels PyTorch's ROCm configure downloads: what to fetch, fetching it.

Owns: reading AOTriton's release facts from a PyTorch checkout the way its
cmake/External/aotriton.cmake does (the `set(__AOTRITON_*)` lists of newer releases, or the six
lines of .ci/docker/aotriton_version.txt older ones read with `file(STRINGS)`), choosing the
runtime tarball the way the tree's aotriton.cmake does (by the HIP version's major.minor in the
newer files, `${HIP_VERSION_MAJOR}.${HIP_VERSION_MINOR}`; by ROCm's in older ones,
`${ROCM_VERSION_DEV_MAJOR}.${ROCM_VERSION_DEV_MINOR}`: they differ from ROCm 10, which ships
HIP 7.15) and the kernel images for the targets, downloading them
(sha256-checked, atomic: sources.triton_wheel.download_verified) and unpacking them into one
prefix that AOTRITON_INSTALLED_PREFIX can point at. Must not: decide whether the build wants
flash attention (plan.features does) or touch anything outside the work dir.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rocmforge.errors import RocmforgeError, UsageError
from rocmforge.knowledge.features import image_covers
from rocmforge.probes.hazards import AOTRITON_CMAKE

CMAKE_FILE = AOTRITON_CMAKE
VERSION_FILE = ".ci/docker/aotriton_version.txt"
DEFAULT_BASE_URL = "https://github.com/ROCm/aotriton/releases/download/"
MARKER = ".rocmforge-aotriton"  # written last into a complete prefix: its content names the files


class AotritonFactsError(RocmforgeError):
    exit_code = 2


@dataclass(frozen=True, kw_only=True)
class AotritonRelease:
    """AOTriton as one PyTorch release pins it."""

    version: str
    rocm: tuple[str, ...]  # "rocm6.4", ...
    manylinux: tuple[str, ...]  # one per rocm entry
    sha256: tuple[str, ...]  # one per rocm entry
    compression: str  # "gz", "bz2", ...
    images: tuple[tuple[str, str], ...] = ()  # ("amd-gfx942", sha256): per-target kernel images
    variants: str = ""
    exact_rocm: bool = True  # newer: the ROCm must be listed; older: clamped into the range
    base_url: str = DEFAULT_BASE_URL
    source: str = ""
    # Which version picks the runtime: "hip" (HIP_VERSION_MAJOR.MINOR) or "rocm"
    # (ROCM_VERSION_DEV_MAJOR.MINOR), as the file's `set(__AOTRITON_SYSTEM_ROCM ...)` says.
    keyed_on: str = "rocm"


@dataclass(frozen=True, kw_only=True)
class Artifact:
    """One file to fetch: where from, its sha256, its name."""

    url: str
    sha256: str
    filename: str


@dataclass(frozen=True, kw_only=True)
class AotritonFetch:
    """What a build for one ROCm release and these targets needs from AOTriton."""

    release: AotritonRelease
    rocm: str  # the runtime's ROCm entry, "rocm7.0"
    runtime: Artifact | None  # None: this release has no runtime for the ROCm (built from source)
    key: str = ""  # the version the entry was looked up by: "HIP 7.15", "ROCm 6.4"
    images: tuple[Artifact, ...]
    prefix_name: str  # folder under the work dir's aotriton/

    @property
    def artifacts(self) -> tuple[Artifact, ...]:
        return ((self.runtime,) if self.runtime else ()) + self.images


# --- reading the tree -------------------------------------------------------------------------

_SET = re.compile(r"^\s*set\((__AOTRITON_[A-Z0-9_]+)\s+(.*?)\)\s*$", re.M | re.S)
_JOIN = re.compile(r"list\(\s*JOIN\s+(.*?)\s+\"?;\"?\s+(__AOTRITON_[A-Z0-9_]+)\s*\)", re.S)
_QUOTED = re.compile(r'"([^"]*)"')
_SYSTEM_KEY = re.compile(r"set\(__AOTRITON_SYSTEM_ROCM\s+\"\$\{(HIP|ROCM)_VERSION(?:_DEV)?_MAJOR\}")


def runtime_key(text: str) -> str:
    """"hip" when aotriton.cmake picks the runtime by `${HIP_VERSION_MAJOR}.${HIP_VERSION_MINOR}`,
    "rocm" when by `${ROCM_VERSION_DEV_MAJOR}.${ROCM_VERSION_DEV_MINOR}` (or when it says
    neither: the files before the HIP key all used ROCm's)."""
    found = _SYSTEM_KEY.search(text)
    return "hip" if found and found.group(1) == "HIP" else "rocm"


def _values(body: str) -> list[str]:
    no_comments = "\n".join(line.split("#", 1)[0] for line in body.splitlines())
    quoted = _QUOTED.findall(no_comments)
    return quoted if quoted else no_comments.split()


def _cmake_sets(text: str) -> dict[str, list[str]]:
    """The first `set(__AOTRITON_X ...)` / `list(JOIN ... __AOTRITON_X)` of each name: the
    top-level value (later ones sit in `if(USE_ASAN)` and variant branches)."""
    found: dict[str, list[str]] = {}
    for match in _JOIN.finditer(text):
        found.setdefault(match.group(2), [v for v in _values(match.group(1)) if v != ";"])
    for match in _SET.finditer(text):
        body = match.group(2)
        if "(" in body:  # set(__AOTRITON_CI_COMMIT "$ENV{...}") has none; skip nested calls
            continue
        found.setdefault(match.group(1), _values(body))
    return found


def parse_version_txt(text: str, *, source: str = VERSION_FILE) -> AotritonRelease:
    """The six lines aotriton.cmake reads with file(STRINGS): version, manylinux list, ROCm list,
    commit, sha256 list, compression (lists ';'-separated)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) < 6:
        raise AotritonFactsError(
            f"{source} has {len(lines)} lines, not the 6 aotriton.cmake reads",
            "version, manylinux list, ROCm list, commit, sha256 list and compression are needed "
            "to know what configure downloads",
            "check the checkout (git status in the PyTorch tree)")
    split = [line.split(";") for line in lines]
    return _checked(AotritonRelease(
        version=lines[0], manylinux=tuple(split[1]), rocm=tuple(split[2]), sha256=tuple(split[4]),
        compression=lines[5], exact_rocm=False, source=source))


def parse_aotriton_cmake(text: str, *, version_txt: str | None = None,
                         source: str = CMAKE_FILE) -> AotritonRelease:
    """AOTriton's facts as `text` (aotriton.cmake) defines them; `version_txt` is the tree's
    aotriton_version.txt, used when the cmake file reads it instead of listing the values."""
    sets = _cmake_sets(text)
    exact = "__AOTRITON_RUNTIME_INDEX" in text and "VERSION_LESS __AOTRITON_ROCM_LOW" not in text
    if "__AOTRITON_ROCM_LIST" not in sets or "__AOTRITON_SHA256_LIST" not in sets:
        if version_txt is None:
            raise AotritonFactsError(
                f"{source} lists no AOTriton release and the tree has no {VERSION_FILE}",
                "the kit reads what configure would download from these two files",
                "check the checkout, or turn flash and memory-efficient attention off "
                "(features = {flash_attention = \"off\", mem_efficient_attention = \"off\"})")
        release = parse_version_txt(version_txt, source=f"{VERSION_FILE} (read by {source})")
        return dataclasses.replace(release, keyed_on=runtime_key(text))
    images = tuple(zip(sets.get("__AOTRITON_IMAGE_LIST", []),
                       sets.get("__AOTRITON_IMAGE_SHA256_LIST", []), strict=False))
    return _checked(AotritonRelease(
        version=_one(sets, "__AOTRITON_VER", source), rocm=tuple(sets["__AOTRITON_ROCM_LIST"]),
        manylinux=tuple(sets.get("__AOTRITON_MANYLINUX_LIST", [])),
        sha256=tuple(sets["__AOTRITON_SHA256_LIST"]),
        compression=_one(sets, "__AOTRITON_Z", source), images=images,
        variants="".join(sets.get("__AOTRITON_BUILD_VARIANTS", [])), exact_rocm=exact,
        source=source, keyed_on=runtime_key(text)))


def release_from_tree(tree: Path) -> AotritonRelease | None:
    """The checkout's AOTriton facts; None when the tree has no aotriton.cmake (no AOTriton)."""
    cmake = tree / CMAKE_FILE
    if not cmake.is_file():
        return None
    txt = tree / VERSION_FILE
    return parse_aotriton_cmake(cmake.read_text(errors="replace"),
                                version_txt=txt.read_text() if txt.is_file() else None,
                                source=f"tree: {CMAKE_FILE}")


def _one(sets: dict[str, list[str]], name: str, source: str) -> str:
    values = sets.get(name)
    if not values:
        raise AotritonFactsError(f"{source} sets no {name}",
                                 "the download's file name is built from it",
                                 "check the checkout (git status in the PyTorch tree)")
    return values[0]


def _checked(release: AotritonRelease) -> AotritonRelease:
    n = len(release.rocm)
    if not n or len(release.sha256) != n or (release.manylinux and len(release.manylinux) != n):
        raise AotritonFactsError(
            f"{release.source}: the ROCm list ({n}), manylinux list ({len(release.manylinux)}) "
            f"and sha256 list ({len(release.sha256)}) of AOTriton {release.version} differ in "
            "length",
            "aotriton.cmake picks the n-th entry of each list",
            "check the checkout (git status in the PyTorch tree)")
    return release


# --- choosing ---------------------------------------------------------------------------------

def _rocm_entry(release: AotritonRelease, rocm_version: str) -> str | None:
    parts = rocm_version.split(".")
    if len(parts) < 2:
        return None
    wanted = f"{parts[0]}.{parts[1]}"
    if not release.exact_rocm:  # older aotriton.cmake: clamp into [first, last]
        def key(entry: str) -> tuple[int, ...]:
            return tuple(int(x) for x in entry.removeprefix("rocm").split(".") if x.isdigit())
        low, high = release.rocm[0], release.rocm[-1]
        if key("rocm" + wanted) < key(low):
            return low
        if key("rocm" + wanted) > key(high):
            return high
    entry = "rocm" + wanted
    return entry if entry in release.rocm else None


def lookup_version(release: AotritonRelease, rocm_version: str, hip_version: str) -> str:
    """The version aotriton.cmake would look the runtime up by: HIP's where the file keys on
    HIP, ROCm's otherwise. Before ROCm 10 HIP carried ROCm's major.minor, so ROCm's stands in
    for an unknown HIP there; from 10 on an unknown HIP is unknown ("")."""
    if release.keyed_on != "hip":
        return rocm_version
    if hip_version:
        return hip_version
    major = rocm_version.split(".")[0]
    return rocm_version if major.isdigit() and int(major) < 10 else ""


def plan_fetch(release: AotritonRelease, rocm_version: str, targets: Sequence[str], *,
               base_url: str = "", machine: str = "x86_64",
               hip_version: str = "") -> AotritonFetch:
    """The files configure would download for this ROCm (and its HIP, `hip_version`, which the
    newer aotriton.cmake looks the runtime up by) and these targets (pure)."""
    base = base_url or release.base_url
    base = base if base.endswith("/") else base + "/"
    z = release.compression
    version = lookup_version(release, rocm_version, hip_version)
    entry = _rocm_entry(release, version)
    runtime = None
    if entry is not None:
        index = release.rocm.index(entry)
        manylinux = release.manylinux[index] if release.manylinux else ""
        name = (f"aotriton-{release.version}{release.variants}-{manylinux}_{machine}-{entry}"
                f"-shared.tar.{z}")
        runtime = Artifact(url=f"{base}{release.version}/{name}", sha256=release.sha256[index],
                           filename=name)
    images = []
    for image, sha in release.images:
        if any(image_covers(image, t) for t in targets):
            name = f"aotriton-{release.version}{release.variants}-images-{image}.tar.{z}"
            images.append(Artifact(url=f"{base}{release.version}/{name}", sha256=sha,
                                   filename=name))
    prefix = f"{release.version}{release.variants}-{entry or 'rocm' + rocm_version}-{machine}"
    key = f"{'HIP' if release.keyed_on == 'hip' else 'ROCm'} {version or 'unknown'}"
    return AotritonFetch(release=release, rocm=entry or "", runtime=runtime,
                         images=tuple(images), prefix_name=prefix, key=key)


def fetched_prefix(aotriton_dir: Path, fetch: AotritonFetch) -> Path | None:
    """The unpacked prefix when `fetch` is complete in it (its marker names every file)."""
    prefix = aotriton_dir / fetch.prefix_name
    marker = prefix / MARKER
    if not marker.is_file():
        return None
    done = set(marker.read_text().split())
    return prefix if all(a.sha256 in done for a in fetch.artifacts) else None


# --- fetching ---------------------------------------------------------------------------------

def fetch_aotriton(fetch: AotritonFetch, aotriton_dir: Path, downloads: Path, *,
                   progress: bool = True, timeout_s: float = 60.0) -> Path:
    """Download every artifact of `fetch` (sha256-checked) and unpack them into one prefix.

    The prefix appears only when every file downloaded, matched its hash and unpacked: the work
    happens in a temporary folder beside it that is renamed into place at the end."""

    if fetch.runtime is None:
        raise UsageError(
            f"AOTriton {fetch.release.version} publishes no runtime for {fetch.key} "
            f"({', '.join(fetch.release.rocm)} only; {fetch.release.source} looks it up by "
            f"{'HIP' if fetch.release.keyed_on == 'hip' else 'ROCm'}'s major.minor)",
            "configure would build AOTriton from source for it, which needs the network",
            "use a ROCm release from that list, or turn flash and memory-efficient attention off")
    files = [_download(fetch, a, downloads, progress=progress, timeout_s=timeout_s)
             for a in fetch.artifacts]
    aotriton_dir.mkdir(parents=True, exist_ok=True)
    final = aotriton_dir / fetch.prefix_name
    work = Path(tempfile.mkdtemp(dir=aotriton_dir, prefix=f".{fetch.prefix_name}."))
    try:
        for path in files:
            _unpack_into(path, work)
        for needed in ("lib", "include"):
            if not (work / needed).is_dir():
                raise UsageError(
                    f"The AOTriton runtime {files[0].name} has no {needed}/ folder",
                    "aotriton.cmake installs lib/ and include/ from AOTRITON_INSTALLED_PREFIX",
                    "check the mirror serves AOTriton's own release files")
        (work / MARKER).write_text("\n".join(a.sha256 for a in fetch.artifacts) + "\n")
        if final.exists():
            shutil.rmtree(final)
        work.rename(final)
        return final
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


class AotritonFetchFailed(RocmforgeError):
    """An AOTriton file could not be fetched or did not match its sha256; nothing was unpacked."""

    exit_code = 2


def _download(fetch: AotritonFetch, artifact: Artifact, downloads: Path, *, progress: bool,
              timeout_s: float) -> Path:
    """One file, sha256-checked (sources.triton_wheel.download_verified), its failure told in
    AOTriton's terms: which file of which release, where the tree names it, what to do."""
    from rocmforge.errors import DiskFull
    from rocmforge.sources.triton_wheel import DownloadFailed, download_verified

    try:
        return download_verified(artifact.url, artifact.sha256, downloads, progress,
                                 filename=artifact.filename, timeout_s=timeout_s)
    except DiskFull:
        raise  # the disk, not the network or the mirror: its own message, exit 3
    except DownloadFailed as exc:
        kind = "runtime" if artifact is fetch.runtime else "kernel image"
        # An HTTP status says all (its why is worded for a wheel index); keep the others' detail.
        detail = artifact.url if "HTTP" in exc.what or not exc.why else exc.why.rstrip(".")
        if artifact.url not in detail:
            detail = f"{artifact.url} ({detail})"
        failed = AotritonFetchFailed(
            f"Fetching AOTriton {fetch.release.version}'s {kind} failed: {exc.what.rstrip('.')}",
            f"{detail}; the URL and sha256 come from {fetch.release.source}. "
            "Nothing was unpacked, so the build would still download AOTriton itself",
            "rerun `invoke fetch` where the network reaches it, or pass --base-url (or "
            "PYTORCH_AOTRITON_BASE_URL) pointing at a mirror that serves AOTriton's release files "
            "under <version>/<file name>; to build without it set features "
            "flash_attention=off and mem_efficient_attention=off")
        # One condition, one code (README "Exit codes"): the download's own code, as for every
        # fetch: a server that does not answer, answers an HTTP error or sends bytes of another
        # sha256 is the environment (3); a tree whose sha256 is no hash is bad input (2).
        failed.exit_code = exc.exit_code
        raise failed from None


def _unpack_into(archive: Path, dest: Path) -> None:
    """Extract `archive` into `dest`, dropping a single top-level folder as CMake's
    ExternalProject does; only plain files and folders inside `dest` are accepted."""
    import tarfile  # here: only an AOTriton download is unpacked (plan and doctor never are)

    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".unpack.") as raw:
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(raw, filter="data")
        except OSError as exc:
            from rocmforge.errors import disk_full

            full = disk_full(exc, dest.parent)
            if full is not None:
                raise full from None
            raise UsageError(
                f"{archive.name} cannot be unpacked: {exc}",
                "its sha256 matched, so the published file itself is not a readable tarball",
                "report it upstream; nothing was unpacked") from None
        except (tarfile.TarError, EOFError) as exc:
            raise UsageError(
                f"{archive.name} cannot be unpacked: {exc}",
                "its sha256 matched, so the published file itself is not a readable tarball",
                "report it upstream; nothing was unpacked") from None
        entries = list(Path(raw).iterdir())
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else Path(raw)
        for item in top.iterdir():
            _merge(item, dest / item.name)


def _merge(src: Path, dst: Path) -> None:
    if src.is_dir() and dst.is_dir():
        for child in src.iterdir():
            _merge(child, dst / child.name)
        return
    if dst.exists():
        with contextlib.suppress(OSError):
            shutil.rmtree(dst) if dst.is_dir() else dst.unlink()
    shutil.move(str(src), dst)


def fetch_from_tree(tree: Path, rocm_version: str, targets: Sequence[str], aotriton_dir: Path,
                    downloads: Path, *, base_url: str = "", machine: str = "x86_64",
                    progress: bool = True, timeout_s: float = 60.0,
                    hip_version: str = "") -> tuple[AotritonFetch, Path]:
    """`invoke fetch`'s work: read the tree's AOTriton facts, fetch and unpack what configure
    would download for `rocm_version` and `targets`; (what was fetched, the prefix)."""
    release = release_from_tree(tree)
    if release is None:
        raise UsageError(
            f"{tree} has no {CMAKE_FILE}",
            "this PyTorch does not download AOTriton (or the folder is not a PyTorch checkout)",
            "run `invoke checkout` first, or point work_dir at the build's work dir")
    fetch = plan_fetch(release, rocm_version, targets, base_url=base_url, machine=machine,
                       hip_version=hip_version)
    done = fetched_prefix(aotriton_dir, fetch)
    if done is not None:
        return fetch, done
    return fetch, fetch_aotriton(fetch, aotriton_dir, downloads, progress=progress,
                                 timeout_s=timeout_s)
