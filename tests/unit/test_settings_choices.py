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


def test_arch_is_a_target_request_parsed_once_with_the_users_words_kept() -> None:
    """`arch` is typed (issue 42 item 5): knowledge.targets' one parser reads it when the
    setting is resolved; the text stays as written (messages and commands repeat it)."""
    from rocmforge.knowledge.targets import TargetId
    from rocmforge.settings import TargetRequest

    assert typing.get_type_hints(Settings)["arch"] is TargetRequest
    settings = resolve(defaults={}, flags={"arch": "mi300;gfx1100, gfx942"})
    assert isinstance(settings.arch, TargetRequest)
    assert settings.arch == "mi300;gfx1100, gfx942"
    assert settings.arch.targets == (TargetId(base="gfx942"), TargetId(base="gfx1100"))
    assert settings.origins["arch"] == "flag --arch"
    assert settings.as_dict()["arch"] == "mi300;gfx1100, gfx942"
    assert resolve(defaults={}, environ={}).arch.targets == ()  # none given: the GPUs found
    env = resolve(defaults={}, environ={"ROCMFORGE_ARCH": "gfx90a:xnack-"}).arch
    assert env.targets == (TargetId(base="gfx90a", xnack="-"),)


@pytest.mark.parametrize(("environ", "flags", "what"), [
    ({"ROCMFORGE_ARCH": "gfx9999"}, {},
     '"gfx9999" is not a GPU target the kit knows. Did you mean "gfx909"?'),
    ({}, {"arch": "gfx90a:xnak-"},
     '"gfx90a:xnak-" is not a valid target ID: \'xnak\' is not a target-ID feature (did you '
     'mean "xnack-"?)'),
], ids=["unknown-from-env", "feature-typo-from-flag"])
def test_a_bad_target_is_refused_when_the_settings_are_resolved(
        environ: dict[str, str], flags: dict[str, str], what: str) -> None:
    from rocmforge.errors import TargetError

    with pytest.raises(TargetError) as refused:
        resolve(defaults={}, environ=environ, flags=flags)
    assert refused.value.what == what
    assert refused.value.exit_code == 2
