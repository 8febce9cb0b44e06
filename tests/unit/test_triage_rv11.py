"""Issue 40, d11 (rv11): look-alikes of the older rules that answer the most corpus cases,
each beside the right twin that must still be read. The lines are torch 2.13's, bash's,
GNU make 4.3's, cmake 3.25's, g++-12's and clang++-22's own words, produced by
tests/failures/make/rv11.sh (or, for make's SIGKILL, by the commands in the test's text)."""

from __future__ import annotations

from rocmforge.triage import explain_text


def _outcome(text: str, step: str = "build") -> tuple[str | None, str, str]:
    d = explain_text(text, step)
    return d.klass, d.subject, d.rule


_SHM = ("RuntimeError: unable to allocate shared memory(shm) for file "
        "</torch_4242_1234567890_0>: No space left on device (28)\n")


def test_torch_shared_memory_file_is_dev_shm_not_the_work_dir() -> None:
    d = explain_text(_SHM, "")
    assert (d.klass, d.subject, d.rule) == ("disk-full", "/dev/shm", "torch-shm-no-space")
    assert "/torch_4242_1234567890_0" in d.cause
    assert "--shm-size" in d.fix and "num_workers=0" in d.fix


def test_other_no_space_lines_keep_the_general_reading() -> None:
    line = "OSError: [Errno 28] No space left on device: '/tmp/pip-unpack-x/torch.whl'\n"
    assert _outcome(line) == ("disk-full", "disk", "disk-full")


def test_bash_x_trace_of_a_grep_names_the_words_only() -> None:
    trace = ("+ grep -c 'No space left on device' build.log\n0\n"
             "+ grep -c 'fatal error: hip/hip_runtime.h: No such file or directory' build.log\n"
             "0\n+ echo 'no known failure'\nno known failure\n")
    assert _outcome(trace) == (None, "", "")
    assert _outcome("$ grep -rn 'No space left on device' build.log\n") == (None, "", "")


def test_the_same_messages_printed_by_the_programs_are_read() -> None:
    assert _outcome("cp: error writing 'out/libtorch_hip.so': No space left on device\n") \
        == ("disk-full", "disk", "disk-full")
    hdr = "main.cpp:1:10: fatal error: hip/hip_runtime.h: No such file or directory\n"
    assert _outcome(hdr)[2] == "missing-header"


def test_a_folder_named_ck_is_not_composable_kernel() -> None:
    own = ("/home/user/ck/src/main.cpp:1:21: error: use of undeclared identifier "
           "'undeclared_value'\n1 error generated.\n")
    assert _outcome(own) == (None, "", "")
    ck = ("/opt/rocm/include/ck/utility/amd_buffer_addressing_builtins.hpp:33:48: error: use "
          "of undeclared identifier 'CK_BUFFER_RESOURCE_3RD_DWORD'\n")
    assert _outcome(ck)[0] == "composable-kernel"


def test_make_echoing_a_python_recipe_then_killed_is_not_the_compiler() -> None:
    # GNU make 4.3 running `python3 -c "import os; os.kill(os.getpid(), 9)"` as a recipe
    # (run here): the echo, the shell's "Killed", make's Error 137.
    log = ('python3 -c "import os; os.kill(os.getpid(), 9)"\nKilled\n'
           "make: *** [Makefile.k:2: all] Error 137\n")
    # Only the exit status is left: a process of the build got SIGKILL (exit-137).
    assert _outcome(log) == ("out-of-memory", "memory", "exit-137")
    assert _outcome("$ python3 train.py\nKilled\n") == (None, "", "")
    compiler = ("g++-12 -c big.cpp -o big.o\nKilled\n")
    assert _outcome(compiler) == ("out-of-memory", "the compiler", "compiler-killed")


_OOM = ("HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB "
        "of which 1.00 GiB is free")


def test_a_ci_script_grepping_for_other_messages_claims_nothing() -> None:
    # bash -x's trace (one "+" per nesting level) of a script that looks for known failures.
    for line in ("+ grep 'Could not find a package configuration file provided by \"hip\"' "
                 "cmake.log",
                 "++ grep -q \"undefined reference to `hipMalloc'\" build.log",
                 f"+ grep -c '{_OOM}' run.log"):
        assert _outcome(line + "\n0\n") == (None, "", ""), line


def test_the_messages_themselves_are_still_read() -> None:
    cfg = ('  Could not find a package configuration file provided by "hip" with any of\n')
    assert _outcome("CMake Error at CMakeLists.txt:3 (find_package):\n" + cfg)[2] == \
        "cmake-config-file"
    assert _outcome("app.cpp:(.text+0x15): undefined reference to `hipMalloc'\n") == \
        ("link", "libamdhip64", "undefined-reference")
    assert _outcome(f"torch.OutOfMemoryError: {_OOM}.\n", "")[2] == "gpu-out-of-memory"


def test_xformers_optional_triton_warning_is_not_a_missing_triton() -> None:
    # xformers/__init__.py logs this with exc_info=True and runs without Triton kernels; the
    # shape is Python 3.11's logging last-resort handler's (run here).
    log = ("A matching Triton is not available, some optimizations will not be enabled\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/lib/python3/site-packages/xformers/__init__.py", line 57, in '
           "_is_triton_available\n    import triton  # noqa\n"
           "ModuleNotFoundError: No module named 'triton'\n")
    assert _outcome(log, "") == (None, "", "")
    plain = ("Traceback (most recent call last):\n  File \"run.py\", line 1, in <module>\n"
             "    import triton\nModuleNotFoundError: No module named 'triton'\n")
    assert _outcome(plain, "") == ("triton", "triton", "triton-missing")
