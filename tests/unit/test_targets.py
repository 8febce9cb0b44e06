"""Target-string parsing: canonical IDs, aliases, and every refusal with its message."""

from __future__ import annotations

import pytest

from rocmforge.errors import TargetError, UsageError
from rocmforge.knowledge.arches import load_arch_table
from rocmforge.knowledge.targets import TargetId, parse_targets, targets_for_cmake


@pytest.fixture(scope="module")
def table():
    return load_arch_table()


def cmake(text, table, **kw) -> str:
    return targets_for_cmake(parse_targets(text, table, **kw))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gfx90a", "gfx90a"),
        ("GFX90A:XNACK-", "gfx90a:xnack-"),
        ("gfx942:xnack-:sramecc+", "gfx942:sramecc+:xnack-"),
        ("gfx1100;gfx942", "gfx1100;gfx942"),
        ("gfx1100, gfx942", "gfx1100;gfx942"),
        ("  gfx1100\tgfx942\n", "gfx1100;gfx942"),
        ("gfx942;gfx1100;gfx942", "gfx942;gfx1100"),
        ("mi300", "gfx942"),
        ("MI300X", "gfx942"),
        ("mi250x;mi210", "gfx90a"),
        ("mi100", "gfx908"),
        ("navi31", "gfx1100"),
        ("navi21", "gfx1030"),
        ("Strix_Halo", "gfx1151"),
        ("strix-point", "gfx1150"),
        ("radeon-7900xtx", "gfx1100"),
        ("RX-7900-XTX", "gfx1100"),
        ("w7900", "gfx1100"),
        ("rx9070", "gfx1201"),
        ("rdna2", "gfx1030;gfx1031;gfx1032;gfx1033;gfx1034;gfx1035;gfx1036"),
        ("rdna3", "gfx1100;gfx1101;gfx1102;gfx1103"),
        ("rdna3.5", "gfx1150;gfx1151;gfx1152;gfx1153"),
        ("rdna4", "gfx1200;gfx1201"),
        ("gfx1100 rdna3", "gfx1100;gfx1101;gfx1102;gfx1103"),
        ("gfx11-generic", "gfx11-generic"),
        ("gfx90a:xnack+;gfx90a:xnack-", "gfx90a:xnack+;gfx90a:xnack-"),
        ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-"),
    ],
)
def test_parse_canonical(text, expected, table):
    assert cmake(text, table) == expected


def test_iterable_input_keeps_order_and_drops_duplicates(table):
    ids = parse_targets(["gfx1100;gfx90a", "mi300", "gfx1100"], table)
    assert ids == (TargetId("gfx1100"), TargetId("gfx90a"), TargetId("gfx942"))


def test_pytorch_wheels_alias_is_the_15_target_list(table):
    assert cmake("pytorch-wheels", table) == (
        "gfx900;gfx906;gfx908;gfx90a;gfx942;gfx1030;gfx1100;gfx1101;gfx1102;gfx1103;"
        "gfx1200;gfx1201;gfx950;gfx1150;gfx1151"
    )


def test_target_id_parse_and_str():
    target = TargetId.parse(" GFX942:XNACK-:SRAMECC+ ")
    assert target == TargetId(base="gfx942", sramecc="+", xnack="-")
    assert str(target) == "gfx942:sramecc+:xnack-"
    assert str(TargetId("gfx90a", xnack="-")) == "gfx90a:xnack-"
    assert str(TargetId("gfx90a")) == "gfx90a"
    # order=True: sortable, by base first
    assert sorted([TargetId("gfx942"), TargetId("gfx90a", xnack="-"), TargetId("gfx1100")]) == [
        TargetId("gfx1100"), TargetId("gfx90a", xnack="-"), TargetId("gfx942")]


def test_llvm_major_accepts_known_targets(table):
    assert cmake("gfx90a;gfx1100", table, llvm_major=15) == "gfx90a;gfx1100"
    assert cmake("gfx940", table, llvm_major=20) == "gfx940"
    assert cmake("gfx942;gfx1151;gfx1201;gfx950", table, llvm_major=22) == (
        "gfx942;gfx1151;gfx1201;gfx950")


def refusal(text, table, **kw) -> str:
    with pytest.raises(TargetError) as info:
        parse_targets(text, table, **kw)
    assert isinstance(info.value, UsageError)
    assert info.value.exit_code == 2
    message = str(info.value)
    assert "\n" not in message and "Fix:" in message
    return message


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("gfx110", ['"gfx110" is not a GPU target the kit knows', 'Did you mean "gfx1100"?']),
        ("gfx1100x", ['Did you mean "gfx1100"?']),
        ("gfx9999", ['"gfx9999" is not a GPU target the kit knows', "config/arches.toml"]),
        ("strx-halo", ['Did you mean "strix-halo"?']),
        ("mi3000", ['Did you mean "mi300"?']),
        ("sm_90", ['"sm_90" is an NVIDIA CUDA target', "gfx942 for an MI300X"]),
        ("gfx1100;SM_80", ['"SM_80" is an NVIDIA CUDA target']),
        ("compute_90", ["NVIDIA CUDA target"]),
        ("gfx1100:xnack+", ["gfx1100 has no xnack feature", "use gfx1100"]),
        ("gfx1030:sramecc-", ["gfx1030 has no sramecc feature"]),
        ("gfx900:sramecc+:xnack-", ["gfx900 has no sramecc feature", "use gfx900:xnack-"]),
        ("gfx90a:xnack", ['"gfx90a:xnack" is not a valid target ID', "write xnack+ or xnack-"]),
        ("gfx90a:xnak-", ["'xnak' is not a target-ID feature", 'did you mean "xnack-"?']),
        ("gfx90a:xnack+:xnack-", ["xnack is given twice"]),
        ("gfx90a:", ["is not a valid target ID"]),
        (":xnack-", ["is not a processor name"]),
        ("gfx90a;gfx90a:xnack-", ['"gfx90a" and "gfx90a:xnack-" cannot be built together',
                                  "invalid offload arch combination"]),
        ("", ["No GPU target was given", "--arch gfx90a"]),
        (" ;, ", ["No GPU target was given"]),
    ],
)
def test_refusals(text, fragments, table):
    message = refusal(text, table)
    for fragment in fragments:
        assert fragment in message


def test_empty_iterable_is_refused(table):
    assert "No GPU target was given" in refusal([], table)


@pytest.mark.parametrize("name", ["gfx940", "gfx941"])
def test_removed_targets_refused_from_llvm_21(name, table):
    message = refusal(name, table, llvm_major=21)
    assert f"{name} was removed in LLVM 21, and this toolchain is LLVM 21" in message
    assert "gfx942" in message
    assert "LLVM 22" in refusal(name, table, llvm_major=22)


def test_too_new_for_llvm(table):
    message = refusal("gfx942", table, llvm_major=15)
    assert "gfx942 needs LLVM 17 or newer, but this toolchain is LLVM 15" in message
    assert "gfx1151 needs LLVM 17" in refusal("gfx1151", table, llvm_major=15)
    assert "gfx950 (from alias 'pytorch-wheels') needs LLVM 20" in refusal(
        "pytorch-wheels", table, llvm_major=19)
    assert "gfx9-4-generic needs LLVM 20" in refusal("gfx9-4-generic", table, llvm_major=19)


def test_targets_for_cmake_empty():
    assert targets_for_cmake(()) == ""


def test_the_unknown_target_message_names_the_tables_range() -> None:
    """Issue 41 item 8: the range in the message is the table's, so every name it accepts
    (gfx1310 included) lies inside it."""
    table = load_arch_table()
    with pytest.raises(TargetError) as caught:
        parse_targets("gfx9999", table)
    processors = [n for n in table.names() if not n.endswith("-generic")]
    assert "gfx1310" in processors
    assert "(gfx900 .. gfx1310 and the gfxN-generic targets)" in str(caught.value)
    assert parse_targets("gfx1310", table)
