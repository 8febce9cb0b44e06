"""Settings fields with a fixed set of values are typed with a Literal (issue 42 item 5), and
that type is what a value is checked against: the refusal names the choices in the Literal's
order, with the same paragraph as before the types. Pure: no tools, no project directory."""

from __future__ import annotations

import typing

import pytest

from rocmforge.errors import UsageError
from rocmforge.knowledge.cache_backends import CacheMode
from rocmforge.knowledge.triton import TritonMode
from rocmforge.settings import Settings, resolve


def test_cache_and_triton_mode_are_typed_by_their_literal() -> None:
    hints = typing.get_type_hints(Settings)
    assert hints["cache"] == CacheMode
    assert typing.get_args(hints["cache"]) == ("auto", "ccache", "sccache", "none")
    assert hints["triton_mode"] == TritonMode
    assert typing.get_args(hints["triton_mode"]) == ("auto", "wheel", "source", "skip")


@pytest.mark.parametrize(("environ", "flags", "what", "fix"), [
    ({"ROCMFORGE_CACHE": "redis"}, {},
     "Setting cache from ROCMFORGE_CACHE has the value 'redis', which is not one of auto, "
     "ccache, sccache, none", "give cache one of auto, ccache, sccache, none"),
    ({}, {"triton_mode": "maybe"},
     "Setting triton_mode from flag --triton has the value 'maybe', which is not one of auto, "
     "wheel, source, skip", "give triton_mode one of auto, wheel, source, skip"),
    ({"ROCMFORGE_TRITON_MODE": "Wheel"}, {},
     "Setting triton_mode from ROCMFORGE_TRITON_MODE has the value 'Wheel', which is not one "
     "of auto, wheel, source, skip", "give triton_mode one of auto, wheel, source, skip"),
], ids=["cache-from-env", "triton-from-flag", "triton-case-matters"])
def test_a_value_outside_the_literal_is_refused_in_one_paragraph(
        environ: dict[str, str], flags: dict[str, str], what: str, fix: str) -> None:
    with pytest.raises(UsageError) as refused:
        resolve(defaults={}, environ=environ, flags=flags)
    assert refused.value.what == what
    assert refused.value.why == "the kit checks every setting before it plans anything"
    assert refused.value.fix == fix
    assert refused.value.exit_code == 2


def test_each_literal_value_is_accepted_with_its_origin() -> None:
    for mode in typing.get_args(CacheMode):
        settings = resolve(defaults={}, environ={"ROCMFORGE_CACHE": f" {mode} "})
        assert settings.cache == mode
        assert settings.origins["cache"] == "env ROCMFORGE_CACHE"
    for mode in typing.get_args(TritonMode):
        assert resolve(defaults={}, flags={"triton_mode": mode}).triton_mode == mode
