"""Failure triage on real build-log excerpts (tests/fixtures/logs, sources in its README)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rocmforge.errors import ConfigError
from rocmforge.triage import explain_file, explain_text
from rocmforge.triage.cmake_summary import configure_reports_rocm
from rocmforge.triage.engine import MAX_EVIDENCE, diagnose
from rocmforge.triage.model import Diagnosis
from rocmforge.triage.table import load_signatures

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
SIGNATURES = load_signatures()


def _log(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


def _shown(found: Diagnosis) -> tuple[str, ...]:
    return tuple(e.text for e in found.evidence)


def _unexplained_lines(text: str) -> tuple[str, ...]:
    """The error-looking lines of a log nothing explains."""
    found = explain_text(text)
    assert found.klass is None
    return _shown(found)


@pytest.mark.parametrize(
    ("fixture", "signature_id", "fix_fragment", "must_show"),
    [
        ("unsupported_arch_clang22.log", "unsupported-offload-arch", "drop gfx940 from --arch",
         "clang-22: error: unsupported HIP gpu architecture: gfx940"),
        ("invalid_target_hipcc_clang15.log", "unsupported-offload-arch", "drop gfx1200 from --arch",
         "clang: error: invalid target ID 'gfx1200'"),
        ("missing_libstdcxx_headers.log", "std-header-missing", "libstdc++-12-dev",
         "fatal error: 'cmath' file not found"),
        ("cc1plus_killed.log", "compiler-killed", "ROCMFORGE_MAX_JOBS=4 invoke build",
         "c++: fatal error: Killed signal terminated program cc1plus"),
        ("cmake_too_old.log", "cmake-too-old", "python -m pip install 'cmake>=3.27'",
         "CMake 3.27 or higher is required.  You are running version 3.25.1"),
        ("no_gpu_arch.log", "no-gpu-arch", "invoke build --arch gfx1100",
         "No GPU arch specified for ROCm build."),
        ("hip_compiler_not_found.log", "hip-compiler-not-found", "HIP_CLANG_PATH",
         "HIP compiler not found at /opt/rocm-7.1.0/lib/llvm/bin/clang++"),
        ("hipcc_command_not_found.log", "hip-compiler-not-found", "install ROCm's HIP SDK",
         "bash: line 1: hipcc: command not found"),
        ("cxx11_abi_link.log", "undefined-reference", "invoke clean",
         "undefined reference to `name_length(std::__cxx11::basic_string"),
        ("glibcxx_version_not_found.log", "glibcxx-version", "LD_LIBRARY_PATH",
         "version `GLIBCXX_3.4.33' not found"),
        ("triton_llvm_download_offline.log", "triton-llvm-fetch-offline", "LLVM_SYSPATH",
         "error: <urlopen error [Errno -2] Name or service not known>"),
        ("configure_cpu_fallback.log", "cpu-fallback", "ROCM_PATH",
         "--   USE_ROCM              : OFF"),
        ("no_space_left_gnu_as.log", "disk-full", "df -h . $TMPDIR",
         "/tmp/ccqNwo1p.s: Fatal error: can't write 34 bytes to section .text of obj.o: "
         "'No space left on device'"),
        ("no_space_left_python.log", "disk-full", "--work-dir",
         "OSError: [Errno 28] No space left on device"),
        ("invalid_device_function.log", "no-binary-for-gpu", "gcnArchName",
         "torch.AcceleratorError: HIP error: invalid device function"),
        ("no_binary_for_gpu.log", "no-binary-for-gpu", "invoke inspect",
         "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"),
    ],
)
def test_fixture_is_triaged(fixture, signature_id, fix_fragment, must_show):
    result = explain_text(_log(fixture))
    assert result.rule == signature_id
    assert fix_fragment in result.fix
    assert any(must_show in line for line in _shown(result))
    assert 1 <= len(result.evidence) <= MAX_EVIDENCE
    assert result.source


def test_named_groups_fill_cause_and_fix():
    result = explain_text(_log("cmake_too_old.log"))
    assert result.cause == (
        "the project's cmake_minimum_required (or a subproject's) asks for CMake 3.27 or newer "
        "but the build environment runs CMake 3.25.1 (PyTorch asks for 3.27 from 2.10 on)"
    )
    killed = explain_text(_log("cc1plus_killed.log"))
    assert "compiler (cc1plus)" in killed.cause


def test_relevant_lines_exact_for_clang22_log():
    result = explain_text(_log("unsupported_arch_clang22.log"))
    assert _shown(result) == (
        "[1/1] Building HIP object k_gfx940.o",
        "FAILED: k_gfx940.o",
        "/usr/bin/clang-22 -x hip --offload-arch=gfx940 -nogpuinc -nogpulib -fPIC -c k.hip "
        "-o k_gfx940.o",
        "clang-22: error: unsupported HIP gpu architecture: gfx940",
        "ninja: build stopped: subcommand failed.",
    )


def test_successful_configure_has_no_triage():
    assert explain_text(_log("configure_rocm_on.log")).klass is None


def test_triton_signature_needs_the_llvm_download_context():
    # The same urllib error without Triton's "downloading and extracting …llvm" line is not it.
    text = "running build_ext\nerror: <urlopen error [Errno -2] Name or service not known>\n"
    assert _unexplained_lines(text) == (
        "error: <urlopen error [Errno -2] Name or service not known>",
    )


def test_configure_reports_rocm():
    assert configure_reports_rocm(_log("configure_rocm_on.log")) is True
    assert configure_reports_rocm(_log("configure_cpu_fallback.log")) is False
    assert configure_reports_rocm(_log("cmake_too_old.log")) is None
    # A USE_ROCM-looking line outside a summary block is not a verdict.
    assert configure_reports_rocm("--   USE_ROCM              : ON\n") is None
    summary = "-- ******** Summary ********\n-- General:\n--   USE_ROCM              : {}\n"
    assert configure_reports_rocm(summary.format("")) is False
    assert configure_reports_rocm(summary.format("0")) is False
    # A reconfigure appends a second summary; the last one counts.
    assert configure_reports_rocm(summary.format("OFF") + summary.format("ON")) is True


def _big_ninja_log(target_bytes: int, error_at: float) -> tuple[str, int]:
    """A synthetic ninja log with long command lines and one OOM kill buried inside."""
    cmd = (
        "/opt/rocm/llvm/bin/clang++ -DUSE_ROCM -D__HIP_PLATFORM_AMD__=1 "
        + " ".join(f"-I/home/user/pytorch/third_party/dep{i}/include" for i in range(20))
        + " --offload-arch=gfx1100 -fPIC -O3 -std=c++17 -c"
    )
    lines: list[str] = []
    size = 0
    n = 0
    buried_at = -1
    while size < target_bytes:
        n += 1
        entry = [
            f"[{n}/60000] Building HIP object caffe2/CMakeFiles/torch_hip.dir/kernel_{n}.hip.o",
            f"{cmd} /home/user/pytorch/aten/src/ATen/native/hip/kernel_{n}.hip",
            "warning: loop not unrolled: the optimizer was unable to perform the requested "
            "transformation [-Wpass-failed=transform-warning]",
        ]
        if buried_at < 0 and size >= target_bytes * error_at:
            buried_at = n
            entry += [
                f"FAILED: caffe2/CMakeFiles/torch_hip.dir/kernel_{n}.hip.o",
                "clang++: error: unable to execute command: Killed",
                "clang++: error: clang frontend command failed due to signal (use -v to see "
                "invocation)",
            ]
        for line in entry:
            lines.append(line)
            size += len(line) + 1
    lines.append("ninja: build stopped: subcommand failed.")
    return "\n".join(lines) + "\n", buried_at


def test_five_megabyte_log_with_one_buried_error(tmp_path):
    text, buried = _big_ninja_log(5 * 1024 * 1024, error_at=0.37)
    assert len(text) >= 5 * 1024 * 1024
    result = explain_text(text)
    assert result.rule == "compiler-killed"
    assert "clang++: error: unable to execute command: Killed" in _shown(result)
    assert f"FAILED: caffe2/CMakeFiles/torch_hip.dir/kernel_{buried}.hip.o" in _shown(result)
    assert len(result.evidence) <= MAX_EVIDENCE
    assert sum(len(line) for line in _shown(result)) < 8000  # not the ninja log
    # Its speed is measured by benchmarks/triage_large_log.py, not asserted here (a timed test
    # fails on a busy machine and proves nothing on a fast one).
    # The same from disk, streamed.
    path = tmp_path / "build.log"
    path.write_text(text, encoding="utf-8")
    from_disk = explain_file(path)
    assert from_disk == result


def test_many_errors_are_capped_and_deduplicated():
    text = "".join(
        f"src/f{i}.cpp:1:1: error: boom {i}\nrepeated line error: same\n" for i in range(500)
    )
    lines = _unexplained_lines(text)
    assert len(lines) <= MAX_EVIDENCE
    assert lines.count("repeated line error: same") == 1
    assert lines[0] == "src/f0.cpp:1:1: error: boom 0"
    assert lines[-1] == "src/f499.cpp:1:1: error: boom 499"


def test_long_command_lines_are_shortened():
    text = "FAILED: x.o\n" + "clang++ " + "-Ifoo " * 5000 + "\nerror: x\n"
    result = _unexplained_lines(text)
    assert all(len(line) <= 402 for line in result)


def _write_table(tmp_path: Path, body: str) -> Path:
    (tmp_path / "diagnostics.toml").write_text(body, encoding="utf-8")
    return tmp_path


GOOD = """
[[signature]]
id = "x"
class = "cmake"
subject = "{what}"
pattern = 'boom (?P<what>\\w+)'
cause = "it went {what}"
fix = "stop {what}"
source = "test"
"""


def test_loader_accepts_a_minimal_table(tmp_path):
    sigs = load_signatures(_write_table(tmp_path, GOOD))
    assert [s.id for s in sigs] == ["x"]
    result = diagnose(["a", "boom bang"], tuple(s.as_rule() for s in sigs))
    assert result.cause == "it went bang" and result.fix == "stop bang"


def test_loader_rejects_a_bad_regex(tmp_path):
    with pytest.raises(ConfigError, match=r"#1 \(x\)\.pattern is not a valid Python regular"):
        load_signatures(_write_table(tmp_path, GOOD.replace("(?P<what>\\w+)", "(unclosed")))


def test_loader_rejects_unknown_and_missing_keys(tmp_path):
    with pytest.raises(ConfigError, match=r'Unknown key "sourse".*Did you mean "source"'):
        load_signatures(_write_table(tmp_path, GOOD.replace("source =", "sourse =")))
    no_source = "\n".join(line for line in GOOD.splitlines() if not line.startswith("source"))
    with pytest.raises(ConfigError, match='Missing key "source"'):
        load_signatures(_write_table(tmp_path, no_source))


def test_loader_rejects_unknown_placeholder_and_duplicate_id(tmp_path):
    with pytest.raises(ConfigError, match="uses {arch} but the pattern has no group named 'arch'"):
        load_signatures(_write_table(tmp_path, GOOD.replace("stop {what}", "stop {arch}")))
    with pytest.raises(ConfigError, match='Signature id "x" appears twice'):
        load_signatures(_write_table(tmp_path, GOOD + GOOD))


def test_every_shipped_signature_has_a_source_and_a_pattern():
    """Each entry's real case is checked with the corpus (test_failure_corpus.py)."""
    assert all(s.source.strip() for s in SIGNATURES)
    assert all(re.compile(s.pattern.pattern) for s in SIGNATURES)


def test_a_table_trigger_must_be_a_word(tmp_path):
    # load_signatures is cached per folder: each table gets its own.
    def table(name: str, extra: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        return _write_table(folder, GOOD + extra)

    with pytest.raises(ConfigError, match=r"#1 \(x\)\.triggers holds '', not a word"):
        load_signatures(table("empty", 'triggers = ["boom", ""]\n'))
    rules = tuple(s.as_rule() for s in load_signatures(table("good", 'triggers = ["boom"]\n')))
    assert rules[0].triggers == ("boom",)
    assert diagnose(["boom bang"], rules).rule == "x"
    # A line without a trigger word is not tried, whatever the pattern would say.
    other = tuple(s.as_rule() for s in load_signatures(table("other", 'triggers = ["BOOM"]\n')))
    assert diagnose(["boom bang"], other).klass is None


@pytest.mark.parametrize(
    ("env", "advice"),
    [
        ({"MAX_JOBS": "2"}, "MAX_JOBS was 2; rerun with half as many, "
                            "`ROCMFORGE_MAX_JOBS=1 invoke build`"),
        ({"MAX_JOBS": "9"}, "MAX_JOBS was 9; rerun with half as many, "
                            "`ROCMFORGE_MAX_JOBS=4 invoke build`"),
        ({"MAX_JOBS": "1"}, "MAX_JOBS was already 1, so fewer jobs cannot help: add memory or "
                            "swap, or build on a larger machine"),
        ({}, "MAX_JOBS was not set (ninja then runs one job per core); rerun with fewer, e.g. "
             "`ROCMFORGE_MAX_JOBS=4 invoke build`"),
    ],
)
def test_oom_advice_is_computed_from_the_runs_own_max_jobs(
    tmp_path: Path, env: dict[str, str], advice: str
) -> None:
    """Issue 18 item 9: the OOM fix never suggests MAX_JOBS=4 to a run that used 2."""
    log = tmp_path / "build.log"
    log.write_text(_log("cc1plus_killed.log"))
    result = explain_file(log, "build", env)
    assert result.rule == "compiler-killed"
    assert result.fix == (f"{advice}; a PyTorch ROCm build needs about 4-5 GB of RAM per "
                          "compile job, and the rerun resumes where it stopped")
