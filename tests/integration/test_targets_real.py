"""The real-tool tests of tests/unit/test_targets.py: they run clang-22,
so they live in tests/integration (issue 42 item 6)."""

from __future__ import annotations

import pytest

from rocmforge.errors import TargetError
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.targets import parse_targets


@pytest.mark.needs_tool("clang-22")
@pytest.mark.parametrize("target", ["gfx1250:xnack+", "gfx1250:sramecc+", "gfx1251:xnack-"])
def test_gfx12_5_target_ids_have_no_features_as_clang_22_says(target: str, tmp_path) -> None:
    """Issue 31: gfx1250:xnack+ and the like were accepted; clang-22 rejects them."""
    import subprocess

    source = tmp_path / "k.hip"
    source.write_text("__attribute__((global)) void k(float* x) { x[0] = 1.0f; }\n")
    done = subprocess.run(["clang-22", "-x", "hip", f"--offload-arch={target}", "-nogpuinc",
                           "-nogpulib", "--cuda-device-only", "-c", str(source), "-o",
                           str(tmp_path / "k.o")], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and f"invalid target ID '{target}'" in done.stderr
    with pytest.raises(TargetError, match="has no"):
        parse_targets(target, load_arch_table())
    plain = target.split(":")[0]
    assert [str(t) for t in parse_targets(plain, load_arch_table())] == [plain]
