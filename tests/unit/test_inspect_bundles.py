"""Bundle parsing on bytes: entry IDs, plain/CCOB v1-v3, stepping, hostile inputs, fuzzing.

Shapes no installed compiler writes (CCOB v1, zlib payloads, lying sizes, zip bombs) are built
with rocmforge.inspect.synthetic; real compiler output is covered in test_inspect_real.py.
"""

from __future__ import annotations

import contextlib
import struct
import time

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocmforge.inspect.bundle_records import BundleFormatError, Limits, parse_entry_id
from rocmforge.inspect.bundles import parse_bundle_at, walk_fatbin
from rocmforge.inspect.byte_source import BytesSource
from rocmforge.inspect.synthetic import ccob, code_object_header, pad_to, plain_bundle

# A fixed EF_AMDGPU_MACH table for unit tests (values from reference §1.2); the reader uses
# config/arches.toml, exercised in test_inspect_real.py.
MACH = {0x3F: "gfx90a", 0x30: "gfx908", 0x41: "gfx1100", 0x4C: "gfx942", 0x54: "gfx11-generic"}


def names(mach: int) -> str | None:
    return MACH.get(mach)


def co(mach: int, **kw: str) -> bytes:
    return code_object_header(mach=mach, **kw) + bytes(500)


HOST = "host-x86_64-unknown-linux-gnu-"
SAMPLE = plain_bundle(
    [
        (HOST, b""),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", co(0x41, xnack="unsupported", sramecc="unsupported")),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", co(0x3F, xnack="off")),
        ("hipv4-amdgcn-amd-amdhsa--gfx942", co(0x4C)),
    ]
)


def scan(data: bytes, limits: Limits = Limits()):  # noqa: B008 - frozen value
    return walk_fatbin(BytesSource(data), len(data), names, limits)


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", "hipv4", "gfx1100"),
        ("hip-amdgcn-amd-amdhsa--gfx942", "hip", "gfx942"),
        ("hip-amdgcn-amd-amdhsa-gfx803", "hip", "gfx803"),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+", "hipv4", "gfx90a:sramecc+:xnack-"),
        ("hipv4-amdgcn-amd-amdhsa--gfx11-generic", "hipv4", "gfx11-generic"),
        ("hipv4-amdgcn-amd-amdhsa-unknown-gfx1030", "hipv4", "gfx1030"),
        ("host-x86_64-unknown-linux", "host", ""),
        ("host-x86_64-unknown-linux-gnu-", "host", ""),
    ],
)
def test_entry_ids_parse_every_spelling(text: str, kind: str, target: str) -> None:
    parsed = parse_entry_id(text)
    assert (parsed.kind, parsed.target) == (kind, target)
    assert parsed.is_host == (kind == "host")


def test_host_triple_loses_trailing_dash() -> None:
    assert parse_entry_id("host-x86_64-unknown-linux-gnu-").triple == "x86_64-unknown-linux-gnu"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("nodash", "no '<kind>-<triple>' form"),
        ("hipv4-amdgcn-amd-amdhsa--", "names no target processor"),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack", "is not '<name>+' or '<name>-'"),
        ("hipv4-amdgcn-amd-amdhsaX-gfx90a", "followed by junk"),
    ],
)
def test_bad_entry_ids_are_format_errors(text: str, fragment: str) -> None:
    with pytest.raises(BundleFormatError, match=fragment.replace("+", r"\+")):
        parse_entry_id(text)


def test_plain_bundle_entries_and_checks() -> None:
    result = scan(SAMPLE)
    assert result.problem == ""
    (bundle,) = result.bundles
    assert bundle.container == "plain"
    assert [e.entry_id.target for e in bundle.device_entries] == [
        "gfx1100",
        "gfx90a:xnack-",
        "gfx942",
    ]
    assert [e.check.status for e in bundle.entries] == ["host", "ok", "ok", "ok"]
    assert {e.check.code_object_version for e in bundle.device_entries} == {4}


@pytest.mark.parametrize(
    ("version", "method"),
    [(1, "zstd"), (1, "zlib"), (2, "zstd"), (2, "zlib"), (3, "zstd"), (3, "zlib")],
)
def test_ccob_versions_and_methods_step_to_the_next_bundle(version: int, method: str) -> None:
    second = plain_bundle([(HOST, b""), ("hip-amdgcn-amd-amdhsa--gfx908", co(0x30))])
    data = pad_to(ccob(SAMPLE, version=version, method=method)) + ccob(
        second, version=version, method=method
    )
    result = scan(data)
    assert result.problem == ""
    assert [b.container for b in result.bundles] == [f"ccob-v{version}"] * 2
    assert [b.compression for b in result.bundles] == [method] * 2
    assert [e.entry_id.target for e in result.bundles[1].device_entries] == ["gfx908"]
    assert result.bundles[0].uncompressed_size == len(SAMPLE)


def test_mixed_plain_and_compressed_bundles_with_padding() -> None:
    data = pad_to(SAMPLE) + pad_to(ccob(SAMPLE)) + SAMPLE
    assert [b.container for b in scan(data).bundles] == ["plain", "ccob-v3", "plain"]


def test_compressed_code_objects_beyond_the_prefix_are_marked_not_checked() -> None:
    gfx1100 = co(0x41, xnack="unsupported", sramecc="unsupported")
    big = plain_bundle(
        [
            (HOST, b""),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", co(0x4C) + bytes(1 << 20)),
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", gfx1100),
        ]
    )
    (bundle,) = scan(ccob(big)).bundles
    assert [e.check.status for e in bundle.device_entries] == ["ok", "not-checked"]
    assert "beyond the decompressed prefix" in bundle.device_entries[1].check.detail


def test_mach_and_feature_mismatches_are_reported() -> None:
    data = plain_bundle(
        [
            ("hipv4-amdgcn-amd-amdhsa--gfx1100", co(0x4C)),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", co(0x3F, xnack="off")),
            ("hipv4-amdgcn-amd-amdhsa--gfx908", code_object_header(mach=0x30, machine=62)),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"not an elf at all" * 10),
        ]
    )
    checks = [e.check for e in scan(data).bundles[0].entries]
    assert [c.status for c in checks] == ["mismatch"] * 4
    assert checks[0].detail == "ID says gfx1100, e_flags mach 0x4c is gfx942"
    assert checks[1].detail == "ID says xnack+, e_flags say xnack off"
    assert checks[2].detail == "e_machine is 62, not EM_AMDGPU (224)"
    assert "not the ELF magic" in checks[3].detail


def test_unknown_mach_is_not_checked_rather_than_wrong() -> None:
    data = plain_bundle([("hipv4-amdgcn-amd-amdhsa--gfx1250", co(0x49))])
    (entry,) = scan(data).bundles[0].entries
    assert entry.check.status == "not-checked"
    assert "0x49 is not in the arch table" in entry.check.detail


def test_truncated_bundle_keeps_earlier_bundles() -> None:
    data = pad_to(SAMPLE) + SAMPLE[:100]
    result = scan(data)
    assert len(result.bundles) == 1
    assert "truncated" in result.problem
    assert result.problem_offset == len(pad_to(SAMPLE))


def test_entry_offset_past_the_section_keeps_the_other_entries() -> None:
    data = bytearray(SAMPLE)
    struct.pack_into("<Q", data, 32 + 24 + len(HOST), 1 << 40)  # second entry's offset
    result = scan(bytes(data))
    (bundle,) = result.bundles
    assert [(e.entry_id.target, e.check.status) for e in bundle.device_entries] == [
        ("gfx1100", "damaged"), ("gfx90a:xnack-", "ok"), ("gfx942", "ok")
    ]
    assert "past the end of its data" in result.problem
    assert result.problem.endswith(": 3 of 4 entries read intact")
    assert (bundle.size_known, result.damage[0].entries_kept) == (False, 4)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"total": 1 << 40}, "declares a total size of 1099511627776 bytes"),
        ({"total": 10}, "declares a total size of 10 bytes"),
        ({"uncompressed": 40}, "declares 40 uncompressed bytes, its zstd frame holds"),
        ({"uncompressed": 40, "method": "zlib"}, "(declaring 40 uncompressed bytes): truncated"),
        ({"uncompressed": 1 << 30}, "the header's sizes lie"),
        ({"payload": b"\x28\xb5\x2f\xfd" + bytes(40)}, "payload ends after 0 decompressed"),
        ({"payload": b"\x28\xb5\x2f\xfd\xff" + bytes(40)}, "does not decompress"),
    ],
)
def test_ccob_sizes_that_lie(kwargs: dict, fragment: str) -> None:
    result = scan(ccob(SAMPLE, **kwargs))
    assert result.bundles == ()
    assert fragment in result.problem


def test_zip_bomb_is_capped() -> None:
    # An entry table that claims 4096 entries with 4 KiB IDs: 16 MiB of table behind 16 KiB
    # of zstd. Only the first 1 MiB is accepted.
    table = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 4096)
    table += (struct.pack("<QQQ", 0, 0, 4096) + b"A" * 4096) * 4096
    payload = zstandard.ZstdCompressor(level=19).compress(table)
    start = time.perf_counter()
    result = scan(ccob(b"", payload=payload, uncompressed=len(table)))
    assert time.perf_counter() - start < 2
    assert "possible zip bomb" in result.problem


def test_zeros_bomb_decompresses_only_a_prefix() -> None:
    zeros = zstandard.ZstdCompressor(level=19).compress(bytes(256 << 20))
    result = scan(ccob(b"", payload=zeros, uncompressed=256 << 20))
    assert "no __CLANG_OFFLOAD_BUNDLE__ magic" in result.problem


def test_unknown_bytes_and_versions() -> None:
    assert "start neither" in scan(b"garbage" + bytes(100)).problem
    bad_version = bytearray(ccob(SAMPLE))
    bad_version[4] = 9
    assert "has version 9 (known: 1, 2, 3)" in scan(bytes(bad_version)).problem
    bad_method = bytearray(ccob(SAMPLE))
    bad_method[6] = 7
    assert "compression method 7" in scan(bytes(bad_method)).problem


def test_all_zero_section_has_no_bundles_and_no_problem() -> None:
    result = scan(bytes(8192))
    assert (result.bundles, result.problem) == ((), "")


# --- fuzzing: the parser raises only BundleFormatError; the walk never raises ------------------

SEEDS = [
    SAMPLE,
    ccob(SAMPLE, version=3),
    ccob(SAMPLE, version=2, method="zlib"),
    ccob(SAMPLE, version=1),
    ccob(SAMPLE, version=1, method="zlib"),
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["flip", "cut", "u64", "insert"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif kind == "cut":
            del data[at:]
        elif kind == "u64" and at + 8 <= len(data):
            value = draw(st.sampled_from([0, 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1, len(data)]))
            struct.pack_into("<Q", data, at, value)
        elif kind == "insert":
            data[at:at] = draw(st.binary(max_size=16))
    return bytes(data)


FUZZ_LIMITS = Limits(max_table_bytes=1 << 16, check_prefix_bytes=1 << 12, max_v1_inflate=1 << 22)


def _parse_only_raises_own_error(data: bytes) -> None:
    with contextlib.suppress(BundleFormatError):
        parse_bundle_at(BytesSource(data), 0, len(data), names, FUZZ_LIMITS)
    result = scan(data, FUZZ_LIMITS)
    assert isinstance(result.problem, str)


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_fuzz_mutated_bundles(data: bytes) -> None:
    _parse_only_raises_own_error(data)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=300).map(lambda b: b"__CLANG_OFFLOAD_BUNDLE__" + b))
def test_fuzz_random_tables(data: bytes) -> None:
    _parse_only_raises_own_error(data)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_entry_ids(text: str) -> None:
    with contextlib.suppress(BundleFormatError):
        parse_entry_id(text)
