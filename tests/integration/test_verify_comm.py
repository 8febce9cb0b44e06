"""`comm`'s failure paths, for real: two gloo worker processes, one of which dies or hangs.

The parent must FAIL with a message naming the rank and where it was, within the timeout, and
leave no worker running. These start real processes that import the CPU build of torch.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rocmforge.verify.checks.comm import LaunchOutcome, launch

pytestmark = [pytest.mark.slow, pytest.mark.needs_import("torch")]


def test_a_dying_rank_and_a_hung_rank_both_fail_within_the_timeout(tmp_path: Path) -> None:
    # The two runs are independent (own ports, own folders); running them side by side halves
    # the test's wall time, which is mostly four processes importing torch.
    def dying() -> LaunchOutcome:
        (tmp_path / "exit").mkdir()
        return launch(world=2, backend="gloo", sizes=(1024,), dtypes=("float32",),
                      timeout_s=20, fault="exit:1", workdir=tmp_path / "exit")

    def hung() -> LaunchOutcome:
        (tmp_path / "hang").mkdir()
        return launch(world=2, backend="gloo", sizes=(1024,), dtypes=("float32",),
                      timeout_s=3, fault="hang:1", workdir=tmp_path / "hang")

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        died_future, hung_future = pool.submit(dying), pool.submit(hung)
        died, stuck = died_future.result(), hung_future.result()
    assert time.monotonic() - started < 60

    assert not died.ok
    assert died.message.startswith("rank 1 exited with code 17 during injected fault exit")
    assert died.reports == ()

    assert not stuck.ok
    assert stuck.message.startswith("timed out: no progress for 3 s (rank 0 at all_reduce "
                                    "float32 1 KiB; rank 1 at injected fault hang); stopped "
                                    "rank(s) 0, 1")
