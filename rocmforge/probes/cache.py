"""Probes of a compiler cache and its shared backend: what the tool is, whether the backend
answers, and what the cache really does with a compile.

Owns: `CacheTool` (`ccache --version` / `sccache --version`: version and compiled-in backends),
the backend checks (a Redis PING over a socket, RESP spoken directly; an HTTP HEAD), the cache's
own statistics as `CacheCounters` (`ccache --print-stats`, `sccache --show-stats --stats-format
json`), `CacheSession` (compiles through the cache with a private local cache dir and, for
sccache, a private server port, so a probe never disturbs the user's cache or server), and
`probe_shared_cache()`, which gathers all of it for doctor. Must not: judge (plan.cache_rows
does), or write anywhere but its own temporary folders and the configured shared cache (one
small test entry).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from rocmforge.knowledge.cache_backends import RemoteCache

CacheName = Literal["ccache", "sccache"]
BackendState = Literal["ok", "auth", "fail", "unchecked"]
CACHE_NAMES: tuple[CacheName, ...] = ("ccache", "sccache")
_VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
# ccache --print-stats counters of calls it passed to the compiler without caching them.
_CCACHE_UNCACHEABLE = (
    "autoconf_test", "bad_compiler_arguments", "called_for_link", "called_for_preprocessing",
    "could_not_find_compiler", "could_not_use_modules", "could_not_use_precompiled_header",
    "compiler_check_failed", "multiple_source_files", "no_input_file", "output_to_stdout",
    "unsupported_code_directive", "unsupported_compiler_option",
    "unsupported_environment_variable", "unsupported_source_language",
)
# The tiny sources the trial compiles: a C function, and a HIP kernel that needs no HIP headers
# and no device library (`-nogpuinc -nogpulib`), only clang's builtins.
TRIAL_C = "int rocmforge_cache_probe(int x) { return 3 * x + 1; }\n"
TRIAL_HIP = """\
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t* hipStream_t;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, __SIZE_TYPE__, hipStream_t);
__attribute__((global)) void rocmforge_cache_probe(float* d, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) d[i] *= 2.0f;
}
"""


@dataclass(frozen=True, kw_only=True)
class CacheTool:
    """A compiler cache found on PATH: its version and (ccache) the backends compiled in."""

    name: CacheName
    path: str
    version: str = ""
    features: tuple[str, ...] = ()
    problem: str = ""  # why the version is unknown


@dataclass(frozen=True, kw_only=True)
class CacheCounters:
    """The cache's own statistics, reduced to what the kit reports."""

    hits: int = 0  # compiles answered from the cache (local or remote)
    misses: int = 0  # cacheable compiles that ran the compiler
    remote_hits: int = 0  # hits the shared backend served
    remote_writes: int = 0  # entries written to the shared backend
    remote_errors: int = 0  # read/write errors and timeouts of the shared backend
    uncacheable: int = 0  # calls passed to the compiler without caching
    reasons: tuple[str, ...] = ()  # the cache's names for why (e.g. unsupported_source_language)

    @property
    def cacheable(self) -> int:
        return self.hits + self.misses

    @property
    def hit_rate(self) -> float:
        return self.hits / self.cacheable if self.cacheable else 0.0

    def since(self, earlier: CacheCounters) -> CacheCounters:
        """What happened between `earlier` and these counters."""
        return CacheCounters(
            hits=self.hits - earlier.hits,
            misses=self.misses - earlier.misses,
            remote_hits=self.remote_hits - earlier.remote_hits,
            remote_writes=self.remote_writes - earlier.remote_writes,
            remote_errors=self.remote_errors - earlier.remote_errors,
            uncacheable=self.uncacheable - earlier.uncacheable,
            reasons=tuple(r for r in self.reasons if r not in earlier.reasons),
        )


@dataclass(frozen=True, kw_only=True)
class BackendCheck:
    """Whether the shared backend answered: ok, auth (answered, wants credentials), fail, or
    unchecked (a protocol the kit does not speak: S3, GCS)."""

    state: BackendState
    detail: str


@dataclass(frozen=True, kw_only=True)
class TrialCompile:
    """One compile through the cache: the command, whether it compiled, what the cache counted."""

    language: Literal["c", "hip"]
    argv: tuple[str, ...]
    compiled: bool
    counters: CacheCounters = field(default_factory=CacheCounters)
    problem: str = ""  # the compiler's or the cache's complaint when it did not compile


@dataclass(frozen=True, kw_only=True)
class SharedCacheProbe:
    """Everything doctor judges about the compiler cache of the build environment."""

    tool: CacheTool
    remote: RemoteCache | None
    variables: tuple[tuple[str, str], ...]  # the cache's variables in the build environment
    backend: BackendCheck | None = None
    started: bool = True  # sccache: its server started with the configuration
    start_problem: str = ""
    host_trial: TrialCompile | None = None
    hip_trial: TrialCompile | None = None
    hip_launcher: bool = False  # HIP_CLANG_LAUNCHER in the build environment
    hip_compiler: str = ""
    hip_target: str = ""
    cached_at: str = ""  # when this result was stored, if it came from the probe cache


# --- the tool -------------------------------------------------------------------------------


def probe_cache_tool(name: CacheName, path: str) -> CacheTool:
    """`<path> --version`, parsed: ccache's first line and its "Features:" line, sccache's
    "sccache X.Y.Z"."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CacheTool(name=name, path=path, problem=f"`{path} --version` failed: {exc}")
    text = done.stdout + done.stderr
    return parse_cache_version(name, path, text)


def parse_cache_version(name: CacheName, path: str, text: str) -> CacheTool:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    found = _VERSION.search(first)
    features: tuple[str, ...] = ()
    for line in lines:
        if line.lower().startswith("features:"):
            features = tuple(line.split(":", 1)[1].split())
    if found is None:
        return CacheTool(name=name, path=path, features=features,
                         problem=f"`{path} --version` printed no version ({first or 'nothing'!r})")
    return CacheTool(name=name, path=path, version=found.group(1), features=features)


# --- statistics -----------------------------------------------------------------------------


def parse_ccache_stats(text: str) -> CacheCounters:
    """`ccache --print-stats` (tab-separated "name<TAB>value" lines, ccache >= 3.7)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition("\t")
        if value.strip().lstrip("-").isdigit():
            values[name.strip()] = int(value)
    reasons = tuple(k for k in _CCACHE_UNCACHEABLE if values.get(k, 0))
    return CacheCounters(
        hits=values.get("direct_cache_hit", 0) + values.get("preprocessed_cache_hit", 0),
        misses=values.get("cache_miss", 0),
        remote_hits=values.get("remote_storage_hit", values.get("secondary_storage_hit", 0)),
        remote_writes=values.get("remote_storage_write", 0),
        remote_errors=(values.get("remote_storage_error", 0)
                       + values.get("remote_storage_timeout", 0)
                       + values.get("secondary_storage_error", 0)
                       + values.get("secondary_storage_timeout", 0)),
        uncacheable=sum(values.get(k, 0) for k in _CCACHE_UNCACHEABLE),
        reasons=reasons,
    )


def parse_sccache_stats(text: str, *, remote: bool) -> CacheCounters:
    """`sccache --show-stats --stats-format json`. With a remote backend sccache keeps no local
    layer, so every hit came from the backend."""
    doc = json.loads(text)
    stats = doc.get("stats", {}) if isinstance(doc, dict) else {}

    def total(key: str) -> int:
        counts = stats.get(key, {}).get("counts", {}) if isinstance(stats.get(key), dict) else {}
        return sum(int(v) for v in counts.values())

    hits = total("cache_hits")
    not_cached = stats.get("not_cached", {}) or {}
    reasons = tuple(sorted(str(k) for k, v in not_cached.items() if v))
    unsupported = int(stats.get("requests_unsupported_compiler", 0))
    if unsupported:
        reasons += ("unsupported_compiler",)
    return CacheCounters(
        hits=hits,
        misses=total("cache_misses"),
        remote_hits=hits if remote else 0,
        remote_writes=int(stats.get("cache_writes", 0)) if remote else 0,
        remote_errors=(total("cache_errors") + int(stats.get("cache_read_errors", 0))
                       + int(stats.get("cache_write_errors", 0))
                       + int(stats.get("cache_timeouts", 0))),
        uncacheable=(int(stats.get("requests_not_cacheable", 0)) + unsupported
                     + int(stats.get("non_cacheable_compilations", 0))),
        reasons=reasons,
    )


def sccache_location(text: str) -> str:
    """The backend sccache says it uses ("redis, name: redis://...", "Local disk: ...")."""
    try:
        doc = json.loads(text)
    except ValueError:
        return ""
    return str(doc.get("cache_location", "")) if isinstance(doc, dict) else ""


# --- the backend ----------------------------------------------------------------------------


def check_backend(remote: RemoteCache, *, username: str = "", password: str = "",
                  timeout_s: float = 3.0) -> BackendCheck:
    """A Redis PING or an HTTP HEAD; S3 and GCS are left to the cache's own trial."""
    if remote.scheme in ("redis", "rediss"):
        return ping_redis(remote, username=username, password=password, timeout_s=timeout_s)
    if remote.scheme in ("http", "https"):
        return head_http(remote, timeout_s=timeout_s)
    return BackendCheck(state="unchecked",
                        detail=f"the kit does not speak {remote.scheme}://; whether the cache "
                        "can use the bucket is shown by its own trial compile")


def resp_command(*words: str) -> bytes:
    """One command in RESP, Redis's wire protocol: an array of bulk strings."""
    out = [f"*{len(words)}\r\n".encode()]
    for word in words:
        data = word.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def ping_redis(remote: RemoteCache, *, username: str = "", password: str = "",
               timeout_s: float = 3.0) -> BackendCheck:
    """Connect, AUTH when credentials are given, PING; "+PONG" is the only proof."""
    where = f"{remote.host}:{remote.port}"
    started = time.monotonic()
    try:
        with socket.create_connection((remote.host, remote.port), timeout=timeout_s) as raw:
            stream: socket.socket = raw
            if remote.scheme == "rediss":
                stream = ssl.create_default_context().wrap_socket(raw,
                                                                  server_hostname=remote.host)
            if password:
                words = ("AUTH", username, password) if username else ("AUTH", password)
                stream.sendall(resp_command(*words))
                answer = _read_reply(stream)
                if not answer.startswith("+"):
                    return BackendCheck(state="auth", detail=f"Redis at {where} refused the "
                                        f"credentials: {answer[:120]}")
            stream.sendall(resp_command("PING"))
            answer = _read_reply(stream)
    except TimeoutError:
        return BackendCheck(state="fail",
                            detail=f"no answer from {where} within {timeout_s:g} s")
    except ssl.SSLError as exc:
        return BackendCheck(state="fail", detail=f"TLS with {where} failed: {exc}")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return BackendCheck(state="fail", detail=f"cannot connect to {where}: {reason}")
    elapsed_ms = (time.monotonic() - started) * 1000
    if answer == "+PONG":
        return BackendCheck(state="ok",
                            detail=f"Redis at {where} answered PING in {elapsed_ms:.0f} ms")
    if answer.startswith(("-NOAUTH", "-WRONGPASS")):
        return BackendCheck(state="auth", detail=f"Redis at {where} wants credentials: "
                            f"{answer[1:120]}")
    if answer.startswith("-"):
        return BackendCheck(state="fail", detail=f"Redis at {where} answered PING with an "
                            f"error: {answer[1:120]}")
    return BackendCheck(state="fail", detail=f"{where} is not a Redis server: it answered "
                        f"PING with {answer[:60]!r}")


def _read_reply(stream: socket.socket) -> str:
    """The first line of a RESP reply (simple string, error, or whatever a non-Redis sends)."""
    data = b""
    while b"\r\n" not in data and len(data) < 512:
        chunk = stream.recv(512)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("utf-8", "replace")


def head_http(remote: RemoteCache, *, timeout_s: float = 3.0) -> BackendCheck:
    """An HTTP HEAD of the URL: any answer but 5xx proves the server is there."""
    import urllib.error  # here: only a remote HTTP cache needs urllib's HTTP client
    import urllib.request

    request = urllib.request.Request(remote.url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        status = int(exc.code)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return BackendCheck(state="fail", detail=f"HEAD {remote.url} failed: {reason}")
    if status in (401, 403):
        return BackendCheck(state="auth", detail=f"HEAD {remote.url}: HTTP {status}; the "
                            "server wants credentials")
    if status >= 500:
        return BackendCheck(state="fail", detail=f"HEAD {remote.url}: HTTP {status} (a server "
                            "error)")
    return BackendCheck(state="ok", detail=f"HEAD {remote.url}: HTTP {status}")


# --- compiles through the cache -------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CacheSession:
    """Compiles through one cache with its own local cache dir (and, for sccache, its own server
    on a private port): one "machine". `env` carries the build environment's cache variables."""

    def __init__(self, tool: CacheTool, env: Mapping[str, str], local_dir: Path, *,
                 remote: bool) -> None:
        self.tool = tool
        self.remote = remote
        self.local_dir = local_dir
        merged = dict(env)
        if tool.name == "ccache":
            merged["CCACHE_DIR"] = str(local_dir)
        else:
            merged.pop("SCCACHE_SERVER_UDS", None)
            merged["SCCACHE_DIR"] = str(local_dir)
            merged["SCCACHE_SERVER_PORT"] = str(free_port())
            merged["SCCACHE_IDLE_TIMEOUT"] = "0"
        self.env = merged
        self.started = False
        # The counters as last read, or zero right after start(): a fresh private cache dir (and
        # a fresh sccache server) counts nothing yet, so no stats run is needed before the first
        # compile.
        self.last_counters: CacheCounters | None = None

    def start(self) -> str:
        """'' when the cache is ready; else what it said (sccache's server refused to start)."""
        fresh = not self.local_dir.exists()
        self.local_dir.mkdir(parents=True, exist_ok=True)
        if self.tool.name == "ccache":
            self.started = True
            self.last_counters = CacheCounters() if fresh else None
            return ""
        done = self._run(["--start-server"], timeout=60)
        if done.returncode != 0:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self._run(["--stop-server"], timeout=30)
            return _first_error(done.stdout + done.stderr) or f"exit status {done.returncode}"
        self.started = True
        self.last_counters = CacheCounters() if fresh else None
        return ""

    def stop(self) -> None:
        if self.tool.name == "sccache" and self.started:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self._run(["--stop-server"], timeout=30)
        self.started = False

    def compile(self, argv: Sequence[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
        """`<cache> <argv...>` in `cwd` with this session's environment."""
        return subprocess.run([self.tool.path, *argv], cwd=cwd, env=self.env,
                              capture_output=True, text=True, timeout=600, check=False)

    def counters(self) -> CacheCounters:
        if self.tool.name == "ccache":
            done = self._run(["--print-stats"], timeout=60)
            counted = parse_ccache_stats(done.stdout)
        else:
            counted = parse_sccache_stats(self.stats_json(), remote=self.remote)
        self.last_counters = counted
        return counted

    def stats_json(self) -> str:
        return self._run(["--show-stats", "--stats-format", "json"], timeout=60).stdout

    def _run(self, args: Sequence[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.tool.path, *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout, check=False)

    def __enter__(self) -> CacheSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _first_error(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if "error" in line.lower()]
    return " ".join(lines[:2])[:400]


def trial_compile(session: CacheSession, language: Literal["c", "hip"], compiler: str,
                  workdir: Path, *, hip_target: str = "") -> TrialCompile:
    """Compile TRIAL_C or TRIAL_HIP once through the session's cache; count what it did."""
    if language == "c":
        source = workdir / "rocmforge_cache_probe.c"
        source.write_text(TRIAL_C)
        argv: tuple[str, ...] = (compiler, "-O1", "-c", source.name, "-o", "probe_c.o")
    else:
        source = workdir / "rocmforge_cache_probe.hip"
        source.write_text(TRIAL_HIP)
        argv = (compiler, "-x", "hip", f"--offload-arch={hip_target}", "-nogpulib",
                "-nogpuinc", "-O1", "-c", source.name, "-o", "probe_hip.o")
    before = session.last_counters if session.last_counters is not None else session.counters()
    try:
        done = session.compile(argv, cwd=workdir)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return TrialCompile(language=language, argv=argv, compiled=False, problem=str(exc))
    counted = session.counters().since(before)
    problem = "" if done.returncode == 0 else \
        (" ".join((done.stderr or done.stdout).split())[:400] or f"exit {done.returncode}")
    return TrialCompile(language=language, argv=argv, compiled=done.returncode == 0,
                        counters=counted, problem=problem)


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="rocmforge-cache-probe-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cache_variables(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The compiler-cache variables of a build environment (CCACHE_*, SCCACHE_*)."""
    return tuple((k, v) for k, v in env.items() if k.startswith(("CCACHE_", "SCCACHE_")))


def probe_shared_cache(
    env: Mapping[str, str],
    *,
    remote: RemoteCache | None,
    hip_compiler: str,
    hip_target: str,
    environ: Mapping[str, str],
    timeout_s: float = 3.0,
    use_cache: bool = False,
) -> SharedCacheProbe | None:
    """Probe the cache the build environment `env` launches compiles through (None: no cache):
    the tool, the backend and one C compile (when `remote`), and one HIP compile, in a scratch
    folder with a private local cache, so only the shared backend connects them to real builds.

    `use_cache` (and no `remote`: a backend's answer is never kept) takes the HIP trial's
    result from the probe store (rocmforge.probes.probe_store) when nothing that decides it
    changed (`trial_key`), and keeps a fresh result that compiled; the tool's `--version` is
    always asked afresh."""
    launcher = env.get("CMAKE_CXX_COMPILER_LAUNCHER", "")
    if not launcher:
        return None
    name: CacheName = "sccache" if Path(launcher).name.startswith("sccache") else "ccache"
    tool = probe_cache_tool(name, launcher)
    variables = cache_variables(env)
    key = ""
    if use_cache and remote is None and hip_compiler and hip_target:
        from rocmforge.probes import probe_store

        base = {k: v for k, v in environ.items() if not k.startswith(("CCACHE_", "SCCACHE_"))}
        base.update(variables)
        key = trial_key(tool, hip_compiler, hip_target, base,
                        hip_launcher="HIP_CLANG_LAUNCHER" in env)
        kept = probe_store.lookup(key)
        trial = _trial_of_json(kept.value.get("hip_trial")) if kept else None
        if kept is not None and trial is not None:
            return SharedCacheProbe(tool=tool, remote=None, variables=variables,
                                    hip_trial=trial, hip_launcher="HIP_CLANG_LAUNCHER" in env,
                                    hip_compiler=hip_compiler, hip_target=hip_target,
                                    cached_at=kept.stored_at)
    probe = _probe_shared_cache(env, tool, variables, remote=remote, hip_compiler=hip_compiler,
                                hip_target=hip_target, environ=environ, timeout_s=timeout_s)
    if key and probe.started and probe.hip_trial is not None and probe.hip_trial.compiled:
        from rocmforge.probes import probe_store

        probe_store.store(key, {"hip_trial": dataclasses.asdict(probe.hip_trial)})
    return probe


# Variables that change between shells but not what a compile does (kept out of trial_key).
_VOLATILE_VARIABLES = ("PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES", "LS_COLORS",
                       "DISPLAY", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK",
                       "TMUX", "TMUX_PANE", "STY", "WINDOW", "MAIL", "HISTFILE")
# The tools next to the real HIP compiler that a `-x hip -c` compile runs: the driver itself
# (clang -cc1 for host and device), the device linker and the bundler.
_HIP_CHAIN = ("clang", "lld", "ld.lld", "clang-offload-bundler")


def trial_key(tool: CacheTool, hip_compiler: str, hip_target: str, env: Mapping[str, str], *,
              hip_launcher: bool) -> str:
    """The probe-store key of the HIP trial: the cache tool's file and `--version` answer
    (behind a wrapper script, such as pyenv's shim, the answer is what names the program), the
    HIP compiler and the tools beside its real file, the cache's config files, the trial
    source and argv, and the whole environment of the compile but for _VOLATILE_VARIABLES."""
    from rocmforge.probes.probe_store import probe_key

    compiler = Path(shutil.which(hip_compiler) or hip_compiler)
    real_dir = compiler.resolve().parent
    home = Path(env.get("HOME") or Path.home())
    config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    configs = [env.get("SCCACHE_CONF") or config_home / "sccache" / "config",
               env.get("CCACHE_CONFIGPATH") or config_home / "ccache" / "ccache.conf",
               home / ".ccache" / "ccache.conf", "/etc/ccache.conf"]
    files = [tool.path, compiler, *(real_dir / name for name in _HIP_CHAIN), *configs]
    texts = [TRIAL_HIP, tool.name, tool.version, ",".join(tool.features), tool.problem,
             hip_target, f"hip_launcher={hip_launcher}",
             " ".join(("-x", "hip", f"--offload-arch={hip_target}", "-nogpulib", "-nogpuinc",
                       "-O1", "-c"))]
    kept_env = {k: v for k, v in env.items() if k not in _VOLATILE_VARIABLES}
    return probe_key("shared-cache-hip-trial/1", files=files, texts=texts, env=kept_env)


def _trial_of_json(data: object) -> TrialCompile | None:
    """A TrialCompile back from its stored dict; None for anything malformed."""
    if not isinstance(data, dict):
        return None
    try:
        counters = dict(data["counters"])
        counters["reasons"] = tuple(counters.get("reasons", ()))
        return TrialCompile(language=data["language"], argv=tuple(data["argv"]),
                            compiled=bool(data["compiled"]),
                            counters=CacheCounters(**counters), problem=str(data["problem"]))
    except (KeyError, TypeError, ValueError):
        return None


def _probe_shared_cache(
    env: Mapping[str, str],
    tool: CacheTool,
    variables: tuple[tuple[str, str], ...],
    *,
    remote: RemoteCache | None,
    hip_compiler: str,
    hip_target: str,
    environ: Mapping[str, str],
    timeout_s: float,
) -> SharedCacheProbe:
    name = tool.name
    backend = None
    if remote is not None:
        user = environ.get("SCCACHE_REDIS_USERNAME", "") if name == "sccache" else ""
        password = environ.get("SCCACHE_REDIS_PASSWORD", "") if name == "sccache" else ""
        backend = check_backend(remote, username=user, password=password, timeout_s=timeout_s)
    base = {k: v for k, v in environ.items() if not k.startswith(("CCACHE_", "SCCACHE_"))}
    base.update(variables)
    compiler = env.get("CC", "") or "cc"
    with _scratch() as folder:
        # The base dir points at the scratch folder: the build's work dir need not exist yet.
        if "CCACHE_BASEDIR" in base:
            base["CCACHE_BASEDIR"] = str(folder)
        session = CacheSession(tool, base, folder / "local-cache", remote=remote is not None)
        with session:
            problem = session.start()
            if problem:
                return SharedCacheProbe(tool=tool, remote=remote, variables=variables,
                                        backend=backend, started=False, start_problem=problem,
                                        hip_launcher="HIP_CLANG_LAUNCHER" in env,
                                        hip_compiler=hip_compiler, hip_target=hip_target)
            host = trial_compile(session, "c", compiler, folder) if remote else None
            hip = (trial_compile(session, "hip", hip_compiler, folder, hip_target=hip_target)
                   if hip_compiler and hip_target else None)
    return SharedCacheProbe(tool=tool, remote=remote, variables=variables, backend=backend,
                            host_trial=host, hip_trial=hip,
                            hip_launcher="HIP_CLANG_LAUNCHER" in env,
                            hip_compiler=hip_compiler, hip_target=hip_target)

