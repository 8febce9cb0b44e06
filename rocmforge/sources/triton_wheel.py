"""The Triton that a PyTorch checkout pins: a prebuilt wheel from an index, or a source build plan.

Owns: reading a PEP 503 (HTML) / PEP 691 (JSON) simple index for the pin's wheel project, picking
the wheel by `packaging` tags and version, downloading it with a verified sha256 (atomically:
nothing is left in the destination unless the hash matched), the argv/env of a source build, and
the list of conflicting `triton` providers to uninstall. Must not: install anything or run the
build; the runner executes the argv returned here.

Facts (reference pytorch-rocm-build.md §3): wheel project `pytorch-triton-rocm`, renamed
`triton-rocm` in the newest releases (§3.2); version `X.Y.Z` for releases, `X.Y.Z+git<8 hex>`
for newer nightlies, `X.Y.Z+<10 hex>` for older ones, `X.Y.Z+rocm<ver>.git<8 hex>` on
repo.radeon.com (§3.4); setup.py at the root from about Triton 3.4, in `python/` before (§3.2);
LLVM_SYSPATH & co. for an offline build (§3.5); every `triton` provider shares the import name
(§5.5).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urldefrag, urljoin

from packaging.version import InvalidVersion, Version

from rocmforge.errors import EnvironmentFailed, RocmforgeError
from rocmforge.knowledge.triton import TRITON_PROVIDERS
from rocmforge.sources.offline import how_to_set, index_fix
from rocmforge.sources.triton_pin import TritonPin

if TYPE_CHECKING:
    from packaging.tags import Tag

PEP691_JSON = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{PEP691_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
CHUNK = 256 * 1024


class TritonWheelUnavailable(RocmforgeError):
    """No prebuilt wheel can be used; the pipeline falls back to a source build."""


class IndexUnavailable(TritonWheelUnavailable, EnvironmentFailed):
    """The index could not be read (timeout, connection, server error): exit 3 when it stops a
    build (`--triton wheel`); `auto` falls back to a source build."""


class NoMatchingWheel(TritonWheelUnavailable):
    """The index answered, but holds no wheel for this pin and interpreter."""


class DownloadFailed(RocmforgeError):
    """A wheel download was incomplete, corrupt, or could not be written. Nothing was kept."""


class DownloadInterrupted(DownloadFailed, EnvironmentFailed):
    """The network failed during a download (no answer, a reset, a connection closed before the
    last byte): exit 3, as every failed fetch; nothing was kept, so a rerun starts it again."""


def download_refused(name: str, url: str, status: int) -> DownloadInterrupted:
    """A server that answers a file's download with an HTTP error (404, 500, ...): the remote
    does not serve what it lists (README "Exit codes": exit 3, one message for every download:
    Triton's wheel, AOTriton's files)."""
    return DownloadInterrupted(
        f"Cannot fetch {name} from {url}: the server answered HTTP {status}",
        "the server (or the mirror set for it) does not serve the file it is asked for",
        "nothing was kept; check the URL's server or mirror setting, or retry later")


def checksum_mismatch(name: str, url: str, expected: str, actual: str,
                      size: int) -> DownloadInterrupted:
    """Bytes that do not match the published sha256 (README "Exit codes": exit 3, one message
    for every download): the server or a proxy sent another file."""
    return DownloadInterrupted(
        f"The download of {name} from {url} does not match its published sha256",
        f"expected {expected}, got {actual} ({size} bytes): the server or a proxy in between "
        "sent another file",
        "nothing was kept; retry, and if it persists use another server or mirror")


def page_of_wrong_shape(index_url: str, project: str, url: str, why: str) -> IndexUnavailable:
    """An index page that is no project page (README "Exit codes": exit 3, as an index that
    cannot be reached)."""
    return IndexUnavailable(
        f"The package index {index_url} sent a project page for {project} that is no PEP 503 "
        f"or PEP 691 page ({url})", why,
        "retry later (a proxy may have cut or replaced the page); " + index_fix())


def _interrupted(name: str, url: str, problem: str, why: str) -> DownloadInterrupted:
    return DownloadInterrupted(
        f"Cannot fetch {name} from {url}: {problem}", why,
        "nothing was kept (no partial wheel in the downloads folder or the venv); "
        + index_fix())


@dataclass(frozen=True, kw_only=True)
class IndexFile:
    """One file listed on a simple-index project page."""

    filename: str
    url: str
    sha256: str = ""
    yanked: bool = False
    requires_python: str = ""


@dataclass(frozen=True, kw_only=True)
class WheelChoice:
    """The wheel picked for a pin, with the hash the index published for it."""

    filename: str
    url: str
    sha256: str
    version: str
    tag: str


@dataclass(frozen=True, kw_only=True)
class IndexClient:
    """A small PEP 503/691 reader over `requests`, with timeouts and retries."""

    index_url: str
    timeout_s: float = 30.0
    retries: int = 2
    headers: Mapping[str, str] = field(default_factory=dict)

    def _session(self) -> Any:
        import requests
        from requests.adapters import HTTPAdapter
        from urllib3.util.retry import Retry

        session = requests.Session()
        retry = Retry(
            total=self.retries,
            connect=self.retries,
            read=self.retries,
            status=self.retries,
            backoff_factor=0.2,
            status_forcelist=(429, 500, 502, 503, 504),
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,
        )
        adapter = HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.headers.update({"User-Agent": "rocmforge", **self.headers})
        return session

    def project_url(self, project: str) -> str:
        from packaging.utils import canonicalize_name

        return self.index_url.rstrip("/") + "/" + canonicalize_name(project) + "/"

    def files(self, project: str) -> tuple[IndexFile, ...]:
        """The files on the project page; NoMatchingWheel on 404, IndexUnavailable otherwise."""
        import requests
        from packaging.utils import canonicalize_name

        url = self.project_url(project)
        try:
            with self._session() as session:
                response = session.get(url, headers={"Accept": ACCEPT}, timeout=self.timeout_s)
        except requests.RequestException as exc:
            if not _is_timeout(exc):
                raise IndexUnavailable(
                    f"The package index {self.index_url} could not be reached",
                    f"{type(exc).__name__}: {exc}",
                    index_fix(),
                ) from None
            raise IndexUnavailable(
                f"The package index {self.index_url} did not answer within {self.timeout_s:g} s",
                f"reading {url} timed out (after {self.retries} retries)",
                index_fix(),
            ) from None
        if response.status_code == 404:
            raise NoMatchingWheel(
                f"The index {self.index_url} has no project {canonicalize_name(project)}",
                f"{url} answered 404",
                f"check {how_to_set('triton_index', 'URL')} (it should be the index of your "
                "ROCm version), or let the build fall back to a Triton source build "
                "(--triton auto or source)",
            )
        if response.status_code >= 400:
            raise IndexUnavailable(
                f"The package index answered HTTP {response.status_code} for {url}",
                "the index is failing or refuses the request",
                "retry later; " + index_fix(),
            )
        content_type = response.headers.get("Content-Type", "").split(";")[0].strip()
        if content_type == PEP691_JSON:
            try:
                doc = response.json()
            except ValueError as exc:
                raise page_of_wrong_shape(
                    self.index_url, project, url,
                    f"its Content-Type says {PEP691_JSON}, but the body does not parse: {exc}",
                ) from None
            files = parse_pep691(doc, base_url=response.url)
            if files is None:
                raise page_of_wrong_shape(
                    self.index_url, project, url,
                    "its 'files' must be a list of objects whose 'hashes' is an object")
            return files
        body = response.text.lower()
        if not any(tag in body for tag in ("<a", "<html", "<body", "<!doctype")):
            # PEP 503: "a valid HTML5 page"; one without a single tag is not an empty project
            # but another page (a proxy's error text, a cut-off download).
            raise page_of_wrong_shape(
                self.index_url, project, url,
                f"its body ({len(response.text)} characters, Content-Type "
                f"{content_type or 'not given'}) has no HTML tag and no link")
        return parse_pep503(response.text, base_url=response.url)


def _is_timeout(exc: BaseException) -> bool:
    """A timeout, also when urllib3's retry wrapper reports it as a ConnectionError."""
    import requests
    from urllib3.exceptions import MaxRetryError, NewConnectionError
    from urllib3.exceptions import TimeoutError as Urllib3Timeout

    inner = exc.args[0] if exc.args else None
    reason = inner.reason if isinstance(inner, MaxRetryError) else None
    # urllib3 makes a refused connection (NewConnectionError) a subclass of its connect timeout.
    if isinstance(reason, NewConnectionError):
        return False
    return isinstance(exc, requests.Timeout) or isinstance(reason, Urllib3Timeout)


def parse_pep691(doc: object, *, base_url: str) -> tuple[IndexFile, ...] | None:
    """Files of a PEP 691 JSON project page (an entry without a string filename and url is not
    a file and is left out); None when the page itself has another shape (not an object,
    'files' not a list, 'hashes' not an object)."""
    if not isinstance(doc, Mapping):
        return None
    out = []
    files = doc.get("files", [])
    if not isinstance(files, list):
        return None
    for entry in files:
        if not (isinstance(entry, dict) and isinstance(entry.get("filename"), str)
                and isinstance(entry.get("url"), str)):
            continue
        hashes = entry.get("hashes") or {}
        if not isinstance(hashes, Mapping):
            return None
        yanked = entry.get("yanked", False)
        out.append(
            IndexFile(
                filename=entry["filename"],
                url=urljoin(base_url, entry["url"]),
                sha256=str(hashes.get("sha256", "")).lower(),
                yanked=bool(yanked),
                requires_python=entry.get("requires-python") or "",
            )
        )
    return tuple(out)


@functools.cache
def _anchors_class() -> type:
    """The HTML anchor collector; html.parser is imported on first use (only a fetch needs it;
    the build's Triton step imports this module before it knows whether it fetches)."""
    from html.parser import HTMLParser

    class _Anchors(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.anchors: list[tuple[dict[str, str | None], str]] = []
            self._open: dict[str, str | None] | None = None
            self._text: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                self._open = dict(attrs)
                self._text = []

        def handle_data(self, data: str) -> None:
            if self._open is not None:
                self._text.append(data)

        def handle_endtag(self, tag: str) -> None:
            if tag == "a" and self._open is not None:
                self.anchors.append((self._open, "".join(self._text).strip()))
                self._open = None

    return _Anchors


def parse_pep503(html: str, *, base_url: str) -> tuple[IndexFile, ...]:
    """Files of a PEP 503 HTML project page (hash from the `#sha256=` fragment)."""
    parser = _anchors_class()()
    parser.feed(html)
    out = []
    for attrs, text in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        url, fragment = urldefrag(urljoin(base_url, href))
        sha = ""
        match = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", fragment)
        if match:
            sha = match.group(1).lower()
        filename = text or url.rsplit("/", 1)[-1]
        out.append(
            IndexFile(
                filename=filename,
                url=url,
                sha256=sha,
                yanked="data-yanked" in attrs,
                requires_python=attrs.get("data-requires-python") or "",
            )
        )
    return tuple(out)


def pick_wheel(
    files: Iterable[IndexFile], pin: TritonPin, supported_tags: Sequence[Tag] | None = None
) -> WheelChoice:
    """The best wheel for the pin and interpreter; NoMatchingWheel names what was there."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    if supported_tags is None:
        from packaging.tags import sys_tags

        supported_tags = list(sys_tags())
    rank_of_tag = {tag: index for index, tag in enumerate(supported_tags)}
    want = canonicalize_name(pin.wheel_name)
    best: tuple[tuple[int, int], WheelChoice] | None = None
    seen_versions: set[str] = set()
    for entry in files:
        if entry.yanked or not entry.filename.endswith(".whl"):
            continue
        try:
            name, version, _build, tags = parse_wheel_filename(entry.filename)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if name != want:
            continue
        seen_versions.add(str(version))
        version_rank = pin.accepts(version)
        if version_rank is None:
            continue
        tag_ranks = [rank_of_tag[t] for t in tags if t in rank_of_tag]
        if not tag_ranks:
            continue
        if not entry.sha256:
            continue  # an unverifiable download is never used
        key = (version_rank, min(tag_ranks))
        choice = WheelChoice(
            filename=entry.filename,
            url=entry.url,
            sha256=entry.sha256,
            version=str(version),
            tag=str(supported_tags[min(tag_ranks)]),
        )
        if best is None or key < best[0]:
            best = (key, choice)
    if best is None:
        listed = ", ".join(sorted(seen_versions)[-8:]) or "none"
        raise NoMatchingWheel(
            f"No {want} wheel for Triton {pin.version} at commit {pin.commit[:8]} fits "
            f"this interpreter ({supported_tags[0] if supported_tags else 'no tags'})",
            f"versions listed: {listed}; the wheel must be {pin.version}, "
            f"{pin.version}+git{pin.commit[:8]} or {pin.version}+{pin.commit[:10]}, carry a "
            "matching tag and publish a sha256",
            "the build falls back to compiling Triton from the pinned checkout",
        )
    return best[1]


def find_wheel(
    client: IndexClient, pin: TritonPin, supported_tags: Sequence[Tag] | None = None
) -> WheelChoice:
    """Read the index and pick the wheel for `pin`."""
    return pick_wheel(client.files(pin.wheel_name), pin, supported_tags)


def download_verified(
    url: str,
    sha256: str,
    dest_dir: Path,
    progress: bool = True,
    *,
    filename: str = "",
    timeout_s: float = 60.0,
    stream: object = None,
) -> Path:
    """Download `url` into `dest_dir` and return the path, only if its sha256 matches.

    Bytes go to a temp file in `dest_dir` (same filesystem) and are renamed into place after
    the hash check, so an interrupted, truncated, corrupt or disk-full download leaves nothing.
    """
    import requests

    expected = sha256.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise DownloadFailed(
            f"Refusing to download {url} without a valid sha256",
            f"the expected hash {sha256!r} is not 64 hex digits",
            "use an index that publishes sha256 hashes (PEP 503 #sha256= or PEP 691 hashes)",
        )
    name = filename or url.rsplit("/", 1)[-1].split("#", 1)[0]
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / name
    digest = hashlib.sha256()
    tmp_name = ""
    try:
        with tempfile.NamedTemporaryFile(
            dir=dest_dir, prefix=f".{name}.", suffix=".part", delete=False
        ) as tmp:
            tmp_name = tmp.name
            try:
                response = requests.get(url, stream=True, timeout=timeout_s)
            except requests.Timeout:
                raise _interrupted(name, url, f"timed out after {timeout_s:g} s",
                                   "the server or the network in between did not respond") \
                    from None
            except requests.RequestException as exc:
                raise _interrupted(name, url, "the connection failed",
                                   f"{type(exc).__name__}: {exc}") from None
            with response:
                if response.status_code != 200:
                    raise download_refused(name, url, response.status_code)
                total = int(response.headers.get("Content-Length") or 0)
                received = _copy(response, tmp, digest, name, total, progress, url=url)
            tmp.flush()
            os.fsync(tmp.fileno())
        if total and received != total:
            raise _interrupted(name, url, f"the download is truncated ({received} of {total} "
                               "bytes)", "the connection ended before the last byte")
        actual = digest.hexdigest()
        if actual != expected:
            raise checksum_mismatch(name, url, expected, actual, received)
        os.replace(tmp_name, final)
        tmp_name = ""
        return final
    except OSError as exc:
        from rocmforge.errors import disk_full

        full = disk_full(exc, dest_dir)
        if full is not None:
            raise full from None
        raise DownloadFailed(
            f"Could not write {name} into {dest_dir}: {exc.strerror or exc}",
            "the operating system refused the write (disk full, quota or file size limit)",
            f"free space in {dest_dir} (df -h {dest_dir}) and rerun; nothing was kept",
        ) from None
    finally:
        if tmp_name:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)


def _copy(
    response: Any, out: IO[bytes], digest: Any, name: str, total: int, progress: bool, *,
    url: str = "",
) -> int:
    import requests

    received = 0
    finished = False
    bar = _Progress(name, total, enabled=progress)
    try:
        for chunk in _chunks(response):
            if not chunk:
                continue
            out.write(chunk)
            digest.update(chunk)
            received += len(chunk)
            bar.advance(received)
        finished = not total or received == total
    except (requests.RequestException, ConnectionError) as exc:
        of = f" of {total}" if total else ""
        # iter_content hands bytes on in whole chunks: what arrived before the break may sit in
        # urllib3's buffer, so count what the connection delivered.
        arrived = _bytes_read(response, received)
        raise _interrupted(name, url or "the server",
                           f"the download broke off after {arrived}{of} bytes",
                           f"{type(exc).__name__}: {exc}") from None
    finally:
        bar.close(received, finished=finished)
    return received


def _chunks(response: Any) -> Iterator[bytes]:
    """The body as it arrives: urllib3's read1 returns what the socket has (up to CHUNK), so
    bytes that came before a stall or reset are counted; iter_content waits for whole chunks
    and loses them. Falls back to iter_content where read1 is missing (urllib3 < 2)."""
    import requests

    raw = getattr(response, "raw", None)
    read1 = getattr(raw, "read1", None)
    if read1 is None:
        yield from response.iter_content(CHUNK)
        return
    from urllib3.exceptions import ProtocolError, ReadTimeoutError

    while True:
        try:
            chunk = read1(CHUNK, decode_content=True)
        except ReadTimeoutError as exc:
            raise requests.ConnectionError(exc) from exc
        except ProtocolError as exc:
            raise requests.exceptions.ChunkedEncodingError(exc) from exc
        if not chunk:
            return
        yield chunk


def _bytes_read(response: Any, counted: int) -> int:
    """Bytes the connection delivered (urllib3's count), at least those already counted."""
    try:
        return max(counted, int(response.raw.tell()))
    except (AttributeError, TypeError, ValueError, OSError):
        return counted


class _Progress:
    """A rich progress bar on a terminal; one plain line at the start and end elsewhere."""

    def __init__(self, name: str, total: int, *, enabled: bool) -> None:
        from rocmforge.render import wants_plain

        self.name = name
        self.enabled = enabled
        self.plain = wants_plain(sys.stderr)
        self._rich: Any = None
        self._task: Any = None
        if not enabled:
            return
        if self.plain:
            size = f" ({total / 1e6:.1f} MB)" if total else ""
            sys.stderr.write(f"downloading {name}{size}\n")
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._rich = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            transient=False,
        )
        self._rich.start()
        self._task = self._rich.add_task(name, total=total or None)

    def advance(self, received: int) -> None:
        if self._rich is not None:
            self._rich.update(self._task, completed=received)

    def close(self, received: int, *, finished: bool = True) -> None:
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.stop()
        elif self.plain:
            sys.stderr.write(f"downloaded {self.name}: {received} bytes\n" if finished else
                             f"the download of {self.name} stopped after {received} bytes\n")


# --- source build and conflicts (pure) --------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TritonSourceBuild:
    """How to build the Triton wheel from a checkout: run argv in cwd with env added."""

    cwd: Path
    argv: tuple[str, ...]
    env: Mapping[str, str]


def triton_setup_at_root(version: str) -> bool:
    """Whether setup.py is at the checkout root for this Triton version.

    Upstream moved it from `python/` to the root around May 2025 (pytorch/pytorch#154635),
    i.e. Triton 3.4; reference §3.2. A probe that sees the tree should prefer the file itself.
    """
    return Version(version).release[:2] >= (3, 4)


def triton_source_build_argv(
    tree: Path,
    pin: TritonPin,
    *,
    python: str,
    dist_dir: Path,
    llvm_syspath: str = "",
    max_jobs: int = 0,
    with_clang_lld: bool = False,
    setup_at_root: bool | None = None,
) -> TritonSourceBuild:
    """The `setup.py bdist_wheel` invocation upstream's build_triton_wheel.py uses (§3.2, §3.5)."""
    at_root = triton_setup_at_root(pin.version) if setup_at_root is None else setup_at_root
    cwd = tree if at_root else tree / "python"
    env: dict[str, str] = {"TRITON_WHEEL_NAME": pin.wheel_name}
    if max_jobs > 0:
        env["MAX_JOBS"] = str(max_jobs)
    if with_clang_lld:
        env["TRITON_BUILD_WITH_CLANG_LLD"] = "1"
    if llvm_syspath:
        root = Path(llvm_syspath)
        env["LLVM_SYSPATH"] = str(root)
        env["LLVM_INCLUDE_DIRS"] = str(root / "include")
        env["LLVM_LIBRARY_DIR"] = str(root / "lib")
    argv = (python, "setup.py", "bdist_wheel", "--dist-dir", str(dist_dir))
    return TritonSourceBuild(cwd=cwd, argv=argv, env=env)


@dataclass(frozen=True, kw_only=True)
class TritonConflicts:
    """Installed distributions that also provide `triton`, and the argv that removes them."""

    names: tuple[str, ...]
    uninstall_argv: tuple[str, ...]


def triton_conflicts(
    installed_dists: Iterable[str], *, keep: str, python: str
) -> TritonConflicts:
    """Every installed `triton` provider except `keep` (e.g. a CUDA `triton` from PyPI).

    They all install the same `triton` import package, so two of them overwrite each other's
    files (reference §5.5). Empty argv when there is nothing to remove.
    """
    from packaging.utils import canonicalize_name

    keep_name = canonicalize_name(keep)
    providers = {canonicalize_name(p) for p in TRITON_PROVIDERS}
    names = sorted(
        {canonicalize_name(d) for d in installed_dists} & providers - {keep_name}
    )
    argv: tuple[str, ...] = ()
    if names:
        argv = (python, "-m", "pip", "uninstall", "--yes", *names)
    return TritonConflicts(names=tuple(names), uninstall_argv=argv)
