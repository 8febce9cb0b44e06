"""The Triton commit a PyTorch tree pins, read from the tree or from a raw-file URL.

Owns: which pin file a PyTorch version uses (from the version table, with the rule of reference
pytorch-rocm-build.md section 3.1 as the fallback), strict parsing of the pin (a full 40-hex
commit; a branch name or short hash is an error, because a branch moves and a short hash can
become ambiguous), and fetching pin files over HTTP with timeouts and retries. Must not: run git
or write anything.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:  # requests costs ~0.1 s to import; only pin fetching needs it
    import requests

from rocmforge.errors import EnvironmentFailed, RocmforgeError
from rocmforge.sources.git import FULL_SHA

PIN_DIR = ".ci/docker/ci_commit_pins"
TRITON_PIN = f"{PIN_DIR}/triton.txt"
TRITON_ROCM_PIN = f"{PIN_DIR}/triton-rocm.txt"
TRITON_VERSION_FILE = ".ci/docker/triton_version.txt"
# Every pin file the kit knows, for trees whose version the table does not know.
KNOWN_PIN_FILES = (TRITON_PIN, TRITON_ROCM_PIN)

# pytorch-rocm-build.md 3.1/3.2: 2.4 and older read triton-rocm.txt and the ROCm fork of Triton;
# from 2.5 ROCm shares triton.txt and upstream triton-lang/triton (which has an AMD backend).
UPSTREAM_TRITON = "https://github.com/triton-lang/triton.git"
ROCM_TRITON = "https://github.com/ROCm/triton.git"
# pytorch-rocm-build.md 3.2: the ROCm wheel is `pytorch-triton-rocm`; upstream release/2.10's
# script names it `triton-rocm` (ROCm/pytorch#2914).
WHEEL_OLD = "pytorch-triton-rocm"
WHEEL_NEW = "triton-rocm"

_SHORT_SHA = re.compile(r"^[0-9a-fA-F]{4,39}$")
_REF_VERSION = re.compile(r"^v?(\d+\.\d+(?:\.\d+)?)(?:-rc\d+)?$")


class PinError(RocmforgeError):
    """A pin file is missing, malformed, or could not be fetched."""


class PinFetchFailed(PinError, EnvironmentFailed):
    """The pin_url server could not be reached or kept failing: exit 3 (the environment)."""


@dataclass(frozen=True, kw_only=True)
class PinLayout:
    """Where one PyTorch version keeps its Triton pin, and what it builds from it."""

    pytorch_version: str
    pin_files: tuple[str, ...]  # preference order
    version_file: str
    repo: str
    wheel_name: str


@dataclass(frozen=True, kw_only=True)
class TritonPin:
    """The Triton a PyTorch tree asks for."""

    commit: str  # 40-hex
    version: str  # from triton_version.txt, "" when the tree has none
    repo: str
    wheel_name: str
    pin_file: str  # path inside the PyTorch tree (or the URL it came from)

    def accepts(self, version: Version) -> int | None:
        """Rank a wheel version for this pin: 0 = built at the pinned commit, 1 = the release.

        None when it is another version or another commit. Local versions seen on the indexes:
        `+git<8 hex>` (newer nightlies), `+<10 hex>` (older ones), `+rocm<ver>.git<8 hex>`.
        """
        if version.public != Version(self.version).public:
            return None
        local = version.local
        if local is None:
            return 1
        commit = self.commit.lower()
        segments = local.lower().split(".")
        if len(commit) >= 8 and f"git{commit[:8]}" in segments:
            return 0
        if len(commit) >= 10 and commit[:10] in segments:
            return 0
        return None

    def as_dict(self) -> dict[str, str]:
        return {
            "commit": self.commit,
            "version": self.version,
            "repo": self.repo,
            "wheel_name": self.wheel_name,
            "pin_file": self.pin_file,
        }


def version_from_ref(ref: str) -> str:
    """`v2.9.1` -> `2.9.1`; "" for branches and commits (read version.txt instead)."""
    match = _REF_VERSION.match(ref.strip())
    return match.group(1) if match else ""


def _base(version: str) -> Version | None:
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        return None


def fallback_layout(pytorch_version: str) -> PinLayout:
    """The rule of pytorch-rocm-build.md 3.1 when the version table has no entry."""
    v = _base(pytorch_version)
    if v is not None and v < Version("2.5"):
        return PinLayout(
            pytorch_version=pytorch_version,
            pin_files=(TRITON_ROCM_PIN, TRITON_PIN),
            version_file=TRITON_VERSION_FILE,
            repo=ROCM_TRITON,
            wheel_name=WHEEL_OLD,
        )
    return PinLayout(
        pytorch_version=pytorch_version,
        pin_files=(TRITON_PIN,),
        version_file=TRITON_VERSION_FILE,
        repo=UPSTREAM_TRITON,
        wheel_name=WHEEL_NEW if v is not None and v >= Version("2.10") else WHEEL_OLD,
    )


def layout_for(pytorch_version: str) -> PinLayout:
    """The version table's answer (rocmforge.knowledge.releases) when it knows the version."""
    from rocmforge.knowledge.releases import pytorch_release_for

    v = _base(pytorch_version)
    if v is None:
        return fallback_layout(pytorch_version)
    try:
        release = pytorch_release_for(str(v))
    except RocmforgeError:  # older than the table: the 3.1 rule still answers
        return fallback_layout(pytorch_version)
    return PinLayout(
        pytorch_version=pytorch_version,
        pin_files=release.triton_pin_files,
        version_file=release.triton_version_file,
        repo=release.triton_repo,
        wheel_name=release.triton_wheel,
    )


def parse_pin(text: str, *, source: str) -> str:
    """The 40-hex commit in a pin file's text; anything else is a PinError naming the problem."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    value = lines[0] if len(lines) == 1 else ""
    if FULL_SHA.match(value):
        return value
    if FULL_SHA.match(value.lower()):
        return value.lower()
    if not lines:
        problem = "is empty"
    elif len(lines) > 1:
        problem = f"has {len(lines)} lines, expected one commit"
    elif _SHORT_SHA.match(value):
        problem = f"holds the short hash {value!r} ({len(value)} hex digits)"
    elif re.match(r"^[A-Za-z0-9._/-]+$", value):
        problem = f"holds {value!r}, which looks like a branch or tag name"
    else:
        problem = f"holds {value[:60]!r}, which is not a commit"
    raise PinError(
        f"The Triton pin {source} {problem}",
        "the kit builds Triton at exactly one commit; a branch moves and a short hash can become "
        "ambiguous, so only a full 40-hex commit is accepted",
        "put the full commit in the pin file (`git rev-parse <ref>` in a Triton clone prints it)",
    )


def read_pin_from_tree(tree: Path, release: PinLayout | None = None) -> TritonPin:
    """The pin of a PyTorch checkout: the layout's files in order, then any known pin file."""
    if release is None:
        version = (
            (tree / "version.txt").read_text().strip() if (tree / "version.txt").is_file() else ""
        )
        release = layout_for(version) if version else fallback_layout("")
    candidates = list(release.pin_files) + [
        f for f in KNOWN_PIN_FILES if f not in release.pin_files
    ]
    for rel in candidates:
        path = tree / rel
        if path.is_file():
            commit = parse_pin(path.read_text(encoding="utf-8", errors="replace"), source=str(path))
            version_path = tree / release.version_file
            version = version_path.read_text().strip() if version_path.is_file() else ""
            return TritonPin(
                commit=commit,
                version=version,
                repo=release.repo,
                wheel_name=release.wheel_name,
                pin_file=rel,
            )
    raise PinError(
        f"{tree} has no Triton pin file (looked for {', '.join(candidates)})",
        "the pin lives in the PyTorch tree and this tree is not a PyTorch checkout, or too old",
        "run `invoke checkout` first, or `invoke triton.pin --ref <tag>` to read it over HTTP",
    )


def raw_url(pin_url: str, ref: str, path: str) -> str:
    """`pin_url` with {ref} and {path} filled in; a PinError when it is not an http(s) template."""
    if "{path}" not in pin_url or "{ref}" not in pin_url:
        raise PinError(
            f"The pin_url setting {pin_url!r} lacks {{ref}} or {{path}}",
            "the kit fills in the PyTorch ref and the pin file path",
            "set pin_url like https://raw.githubusercontent.com/pytorch/pytorch/{ref}/{path}",
        )
    url = pin_url.replace("{ref}", ref).replace("{path}", path)
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise PinError(
            f"The pin_url setting {pin_url!r} is not an http:// or https:// URL with a host",
            "pin files are read over HTTP from a raw-file server",
            "set pin_url like https://raw.githubusercontent.com/pytorch/pytorch/{ref}/{path} "
            "(ROCMFORGE_PIN_URL or rocm.pin_url in invoke.yaml)",
        )
    return url


def short_reason(exc: BaseException) -> str:
    """The part of a requests/urllib3 error a person needs ("cannot resolve host x"), not the
    nested repr of every layer."""
    text = str(exc)
    host = re.search(r"host='([^']+)'", text)
    where = f" {host.group(1)}" if host else ""
    if "NameResolutionError" in text or "Name or service not known" in text:
        return f"cannot resolve the host{where} (no DNS or no network)"
    if "Connection refused" in text:
        return f"connection refused by{where or ' the server'}"
    if "timed out" in text.lower():
        return f"no answer from{where or ' the server'} in time"
    return f"{type(exc).__name__}: {text[:160]}"


def http_get_text(
    url: str,
    *,
    session: requests.Session,
    timeout: float,
    retries: int,
    backoff: float,
) -> str | None:
    """GET `url`: its text, None on 404; retries (exponential backoff) on timeouts, connection
    errors, 429 and 5xx; a PinError after the last try."""
    import requests

    last = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * (2 ** (attempt - 1)))
        try:
            response = session.get(url, timeout=timeout)
        except requests.Timeout:
            last = f"no answer within {timeout:g} s"
            continue
        except (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                requests.exceptions.MissingSchema) as exc:
            # A malformed URL does not get better by asking again.
            raise PinError(
                f"Cannot fetch {url}: {exc}",
                "the URL built from the pin_url setting is malformed",
                "check the pin_url setting",
            ) from None
        except requests.RequestException as exc:
            last = short_reason(exc)
            continue
        if response.status_code == 404:
            return None
        if response.status_code == 429 or response.status_code >= 500:
            last = f"HTTP {response.status_code}"
            continue
        if response.status_code != 200:
            raise PinError(
                f"GET {url} answered HTTP {response.status_code}",
                "the pin_url server refused the request",
                "check the pin_url setting (and any proxy or credentials it needs)",
            )
        return response.text
    raise PinFetchFailed(
        f"Cannot fetch {url} after {retries + 1} tries ({last})",
        "the pin_url server is unreachable or too slow",
        "check the network or the pin_url setting, or run `invoke checkout` and read the pin from "
        "the tree",
    )


def fetch_pin(
    pin_url: str,
    ref: str,
    release: PinLayout | None = None,
    *,
    session: requests.Session | None = None,
    timeout: float = 10.0,
    retries: int = 3,
    backoff: float = 0.5,
) -> TritonPin:
    """The pin of PyTorch `ref` without a checkout, read from raw files at `pin_url`."""
    if not timeout > 0:
        raise PinError(
            f"The HTTP timeout {timeout:g} s is not a positive number of seconds",
            "each pin file request waits at most that long for an answer",
            "pass --timeout with a number above 0, e.g. --timeout 10",
        )
    raw_url(pin_url, ref, TRITON_PIN)  # a malformed pin_url fails here, before any request
    import requests

    own = session is None
    http = session or requests.Session()
    get = lambda path: http_get_text(  # noqa: E731
        raw_url(pin_url, ref, path), session=http, timeout=timeout, retries=retries, backoff=backoff
    )
    try:
        if release is None:
            version = version_from_ref(ref)
            if not version:
                text = get("version.txt")
                if text is None:
                    raise PinError(
                        f"{raw_url(pin_url, ref, 'version.txt')} does not exist (HTTP 404)",
                        f"{ref!r} is not a ref of the repository pin_url serves",
                        "pass an existing tag, branch or full commit with --ref",
                    )
                version = text.strip()
            release = layout_for(version)
        tried: list[str] = []
        for path in release.pin_files:
            text = get(path)
            url = raw_url(pin_url, ref, path)
            if text is None:
                tried.append(url)
                continue
            commit = parse_pin(text, source=url)
            version_text = get(release.version_file)
            return TritonPin(
                commit=commit,
                version=(version_text or "").strip(),
                repo=release.repo,
                wheel_name=release.wheel_name,
                pin_file=path,
            )
        raise PinError(
            f"No Triton pin for PyTorch {ref} (HTTP 404 for {', '.join(tried)})",
            f"{ref!r} is not a ref of that repository, or PyTorch {release.pytorch_version} keeps "
            "its pin elsewhere",
            "check --ref and the pin_url setting",
        )
    finally:
        if own:
            http.close()
