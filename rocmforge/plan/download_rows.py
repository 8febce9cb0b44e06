"""Doctor rows for the files PyTorch's configure downloads (AOTriton's runtime and kernel
images, at the URLs and hashes the checkout's aotriton.cmake names): reachable, gone, or not
checkable offline.

A configure-time download that fails stops the build an hour in: the AOTriton URL answered but
the hash differed (pytorch/pytorch#158420, tests/failures), or the server stopped serving the
file (Triton's LLVM tarball began answering HTTP 409, triton-lang/triton#4527). Owns: which
files to ask about (none when `invoke fetch` already unpacked them, or attention is off), asking
(probes.reachable, all at once, each bounded to 5 s) and the verdict per file. The sha256 is
not checked here (that needs the whole file): the row says so, and `invoke fetch` checks it.
Must not: download a file or print.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from rocmforge.plan.doctor_row import DoctorRow
from rocmforge.probes.reachable import URL_TIMEOUT_S, UrlReach, probe_url

if TYPE_CHECKING:
    from rocmforge.plan.features import AotritonState, FeaturePlan
    from rocmforge.plan.pytorch import PytorchSide
    from rocmforge.probes.facts import Facts
    from rocmforge.settings import Settings

CHECK = "AOTriton download"
_OFF = "features flash_attention=off, mem_efficient_attention=off"


def aotriton_downloads(state: AotritonState | None, attention_on: bool) -> tuple[str, ...]:
    """The URLs configure would fetch: none when attention is off, AOTriton is already
    unpacked (`invoke fetch`), or no checkout names the files yet."""
    if state is None or not attention_on or state.prefix is not None or state.fetch is None:
        return ()
    return tuple(a.url for a in state.fetch.artifacts)


def ask(urls: Sequence[str], *, timeout: float = URL_TIMEOUT_S) -> tuple[UrlReach, ...]:
    """Every URL at once (a thread each, at most 8): the whole check takes one timeout."""
    if not urls:
        return ()
    with ThreadPoolExecutor(max_workers=min(8, len(urls))) as pool:
        return tuple(pool.map(lambda u: probe_url(u, timeout=timeout), urls))


def download_rows(reaches: Sequence[UrlReach]) -> list[DoctorRow]:
    """One row per file that is not plainly reachable, or one OK row for all."""
    rows: list[DoctorRow] = []
    good = [r for r in reaches if r.answer == "http" and r.status in (200, 206)]
    for reach in reaches:
        if reach in good:
            continue
        name = reach.url.rsplit("/", 1)[-1]
        host = urlsplit(reach.url).hostname or reach.url
        if reach.answer == "http":
            rows.append(DoctorRow(
                check=CHECK, status="FAIL",
                detail=f"{reach.url} answers HTTP {reach.status}"
                + (f" ({reach.reason})" if reach.reason else "")
                + ": configure's download of it would stop the build",
                fix="invoke fetch --base-url <a mirror of github.com/ROCm/aotriton/releases> "
                f"(the build then downloads nothing), or leave attention out: {_OFF}"))
        elif reach.answer == "offline":
            rows.append(DoctorRow(
                check=CHECK, status="WARN",
                detail=f"cannot check offline: {host} for {name}: {reach.reason}; configure "
                "downloads it",
                fix="invoke fetch   # where the network reaches "
                f"{host}; the build then downloads nothing"))
        else:
            rows.append(DoctorRow(
                check=CHECK, status="WARN",
                detail=f"{host} did not answer for {name}: {reach.reason}; configure "
                "downloads it",
                fix=f"invoke fetch   # once {host} answers (or with --base-url a mirror)"))
    if good:
        sizes = [r.size for r in good if r.size >= 0]
        total = f", {sum(sizes) / 2**20:.0f} MiB" if len(sizes) == len(good) else ""
        where = urlsplit(good[0].url).hostname or good[0].url
        rows.append(DoctorRow(
            check=CHECK, status="OK",
            detail=f"{len(good)} file(s) configure downloads answer ({where}{total}); their "
            "sha256 is checked when downloaded, not here"))
    return rows


def aotriton_download_doctor(settings: Settings, facts: Facts, targets: Sequence[str],
                             pytorch: PytorchSide | None,
                             features: FeaturePlan | None) -> list[DoctorRow]:
    """The probing half for doctor and the build's preflight: the tree's AOTriton files for
    this ROCm and these targets, asked about when configure would download them."""
    if pytorch is None or features is None or facts.rocm is None:
        return []
    built = features.built
    if not (built.get("flash_attention") or built.get("mem_efficient_attention")):
        return []
    from rocmforge.plan.prepare_features import aotriton_state
    from rocmforge.plan.rocm_facts import hip_version_of
    from rocmforge.workdir import workdir_for

    state = aotriton_state(workdir_for(settings.work_dir), pytorch, facts.rocm.version,
                           targets, hip_version_of(facts.rocm))
    return download_rows(ask(aotriton_downloads(state, attention_on=True)))
