"""Value reading of the shapes changed or added for r16's run-time misses (devrt8). Each test
asserts the exact class, subject, rule and words read, and the look-alikes that must claim
nothing (or another reading)."""

from __future__ import annotations

from rocmforge.triage import explain_text

# rocBLAS's last try (the generic TensileLibrary.dat) in a Windows folder, then its list of
# available files: empty there whatever the folder holds (a regex made of the backslash path).
_WIN = ("rocBLAS error: Cannot read C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/"
        "library/TensileLibrary.dat: No such file or directory for GPU arch : gfx1010\n"
        " List of available TensileLibrary Files : \n")


def test_an_empty_tensile_list_on_windows_is_no_proof_of_an_empty_folder() -> None:
    d = explain_text(_WIN)
    assert (d.klass, d.subject, d.rule) == ("math-library", "rocblas", "tensile-library")
    assert "gfx1010" in d.cause
    assert "always empty" in d.cause
    assert "C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/library" in d.fix
    assert "ROCBLAS_TENSILE_LIBPATH" in d.fix


def test_an_empty_tensile_list_of_a_posix_folder_still_reads_as_a_missing_folder() -> None:
    d = explain_text(_WIN.replace(
        "C:\\Users\\u\\AppData\\Local\\Programs\\App\\rocm\\/rocblas/library",
        "/opt/rocm/lib/rocblas/library"))
    assert (d.klass, d.subject, d.rule) == ("missing-component", "rocblas",
                                            "tensile-folder-empty")
    assert "/opt/rocm/lib/rocblas/library" in d.cause
