"""config/extensions.toml and the extension part of the plan (issue 33), without a build: which
`--with` words are extensions, the backend that covers the targets, each extension's variables
and MAX_JOBS, and the torch pin of a tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmforge.errors import UsageError
from rocmforge.knowledge.extensions import (
    backend_for,
    is_extension_request,
    load_extensions,
    parse_source,
    pin_matches,
    recipe_for_source,
    split_with,
    torch_pin_in,
)
from rocmforge.plan.extensions import extension_choices

TABLE = load_extensions()


def choices(words: list[str], targets: list[str], *, repos: dict[str, str] | None = None,
            jobs: int = 1, cores: int = 1, mem_total_gib: float = 8.0):  # noqa: ANN201
    """extension_choices of the words as parsed, without a remote lookup."""
    return extension_choices([parse_source(w, TABLE, repos or {}) for w in words], TABLE,
                             targets, jobs=jobs, cores=cores, mem_total_gib=mem_total_gib)


def test_with_words_split_into_companions_and_extensions() -> None:
    assert split_with(["torchvision,flash-attention@v2.8.3", "git+https://h/x.git@v1",
                       "torchaudio@v2.11.0", "./my-ext"], TABLE) == (
        ["torchvision", "torchaudio@v2.11.0"],
        ["flash-attention@v2.8.3", "git+https://h/x.git@v1", "./my-ext"])
    assert not is_extension_request("torchvision", TABLE)


def test_a_git_url_is_a_generic_extension_with_pytorch_rocm_arch() -> None:
    source = parse_source("git+https://github.com/acme/Fused-Ops.git@v0.3", TABLE, {})
    recipe = recipe_for_source(source, TABLE)
    assert (recipe.name, recipe.repo, source.ref, recipe.generic, source.form) == (
        "fused-ops", "https://github.com/acme/Fused-Ops.git", "v0.3", True, "git")
    assert recipe.targets_var == "PYTORCH_ROCM_ARCH" and recipe.backends == ()


@pytest.mark.parametrize(("word", "what"), [
    ("git+github.com/acme/ops.git", "'git+github.com/acme/ops.git' (--with) is no git URL"),
    ("git+htps:/acme/ops", "'git+htps:/acme/ops' (--with) is no git URL"),
    ("git+https://h/x.git@v1..2", "'v1..2' in 'git+https://h/x.git@v1..2' (--with) is no git "
     "ref"),
    ("flash-attention@-x", "'-x' in 'flash-attention@-x' (--with) is no git ref")])
def test_a_bad_url_or_ref_is_refused_as_parsed(word: str, what: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_source(word, TABLE, {})
    assert caught.value.what == what


def test_an_explicit_source_wins_over_companion_repos_and_the_plan_says_so() -> None:
    repos = {"my-ext": "https://mirror/my-ext.git", "bitsandbytes": "file:///mirror/bnb"}
    url = parse_source("git+https://h/acme/my-ext.git@v1", TABLE, repos)
    assert (url.repo, url.explicit) == ("https://h/acme/my-ext.git", True)
    assert url.notes == ("my-ext: built from https://h/acme/my-ext.git, which --with names; "
                         "the companion_repos entry my-ext=https://mirror/my-ext.git is not "
                         "used",)
    folder = parse_source("/srv/src/my-ext", TABLE, repos)
    assert (folder.form, folder.repo, folder.name) == ("folder", "/srv/src/my-ext", "my-ext")
    assert "companion_repos entry my-ext=" in folder.notes[0]
    # A recipe named without a source of its own is built from its companion_repos entry.
    assert parse_source("bitsandbytes", TABLE, repos).repo == "file:///mirror/bnb"


@pytest.mark.parametrize(("targets", "backend"), [
    (["gfx942"], "ck"), (["gfx90a", "gfx950"], "ck"), (["gfx942:sramecc+:xnack-"], "ck"),
    (["gfx1100"], "ck"), (["gfx942", "gfx1201"], "ck"), (["gfx1030"], "triton"),
    (["gfx942", "gfx1030"], "triton")])
def test_flash_attention_backend_per_targets(targets: list[str], backend: str) -> None:
    found = backend_for(TABLE.recipes["flash-attention"], targets)
    assert found is not None and found.name == backend


def test_variables_and_max_jobs_of_each_extension() -> None:
    fa, bnb, xf = choices(
        ["flash-attention", "bitsandbytes@0.48.2", "xformers"], ["gfx942", "gfx90a"],
        repos={"bitsandbytes": "file:///mirror/bnb"}, jobs=16, cores=16, mem_total_gib=64.0)
    # 64 GiB at 24 GiB a flash-attention job: 2 jobs, not the torch build's 16.
    assert dict(fa.build_env) == {"BUILD_TARGET": "rocm", "GPU_ARCHS": "gfx942;gfx90a",
                                  "MAX_JOBS": "2"}
    assert (fa.backend, fa.ref, fa.origin) == ("ck", "main", "recipe")
    assert dict(bnb.build_env) == {"BNB_ROCM_ARCH": "gfx942;gfx90a", "BNB_SKIP_CMAKE": "1"}
    assert (bnb.repo, bnb.ref, bnb.version, bnb.origin) == ("file:///mirror/bnb", "0.48.2",
                                                            "0.48.2", "ref")
    # No ROCm version given: -DROCM_VERSION is left out (hipconfig of the build decides).
    assert bnb.pre_build[0] == ("cmake", "-DCOMPUTE_BACKEND=hip",
                                "-DBNB_ROCM_ARCH=gfx942;gfx90a", "-S", ".", "-B", "build")
    # xformers splits HIP_ARCHITECTURES on whitespace and honours no job variable: none is set,
    # and the plan says what its ~30 GiB jobs cost on 16 cores with 64 GiB.
    assert dict(xf.build_env) == {"HIP_ARCHITECTURES": "gfx942 gfx90a"}
    assert "it honours no job-count variable and a compile job needs about 30 GiB: 16 jobs " \
           "on 16 cores can need 480 GiB, this machine has 64 GiB" in xf.note


def test_the_torch_pin_of_a_tree() -> None:
    pattern = TABLE.recipes["vllm"].torch_pin_pattern
    # vLLM's requirements/rocm-build.txt at 0400af21 (config/extensions.toml cites it).
    text = ("--extra-index-url https://download.pytorch.org/whl/rocm6.4\ntorch==2.9.0\n"
            "torchvision==0.24.0\ntorchaudio==2.9.0\n")
    assert torch_pin_in(text, pattern) == "2.9.0"
    assert torch_pin_in("triton==3.2\n", pattern) == ""
    assert pin_matches("2.9.0", "2.9.0a0+rocm7.14.1") and pin_matches("2.9.0", "2.9.0")
    assert not pin_matches("2.9.0", "2.10.0a0")


def test_every_recipe_names_its_sources_and_its_target_variable() -> None:
    assert set(TABLE.names) == {"flash-attention", "bitsandbytes", "xformers", "vllm", "apex"}
    for recipe in TABLE.recipes.values():
        assert recipe.source.strip() and recipe.targets_var, recipe.name
        assert Path(recipe.repo).name.endswith(".git"), recipe.repo


@pytest.mark.parametrize(("word", "url", "ref"), [
    ("git+ssh://git@github.com/acme/ops.git", "ssh://git@github.com/acme/ops.git", ""),
    ("git+https://user@host/r.git@release/1.0", "https://user@host/r.git", "release/1.0"),
    ("git+file:///srv/git/my-ext@v0.1.0", "file:///srv/git/my-ext", "v0.1.0")])
def test_git_words_keep_a_user_in_the_url(word: str, url: str, ref: str) -> None:
    from rocmforge.knowledge.extensions import split_git_word

    assert split_git_word(word) == (url, ref)


def test_a_fork_of_a_recipes_project_keeps_the_recipe() -> None:
    source = parse_source("git+https://github.com/ROCm/flash-attention.git@v2.8.0-rocm",
                          TABLE, {})
    recipe, ref = recipe_for_source(source, TABLE), source.ref
    assert (recipe.name, recipe.repo, recipe.targets_var, ref) == (
        "flash-attention", "https://github.com/ROCm/flash-attention.git", "GPU_ARCHS",
        "v2.8.0-rocm")
    assert not recipe.generic


def test_a_recipes_target_variable_gets_processor_names() -> None:
    """flash-attention's CK check takes gfx942, not gfx942:sramecc+:xnack- (issue 33 review);
    a generic build keeps the target IDs, as PYTORCH_ROCM_ARCH has them."""
    (fa,) = choices(["flash-attention"], ["gfx942:sramecc+:xnack-", "gfx942"])
    assert fa.build_env["GPU_ARCHS"] == "gfx942"
    (generic,) = choices(["git+https://h/x.git@v1"], ["gfx90a:xnack-"])
    assert generic.build_env["PYTORCH_ROCM_ARCH"] == "gfx90a:xnack-"


def test_a_locked_extension_is_rebuilt_by_a_word_the_kit_reads_back() -> None:
    """A lock records companions and extensions by name and commit; one no recipe names is
    rebuilt from git+<repo>@<commit> (the review found `myext@<sha>` refused as unknown)."""
    from rocmforge.sources.locked import _locked_word, _name_and_ref

    sha = "a" * 40
    assert _locked_word("flash-attention", "https://x/fa.git", sha) == f"flash-attention@{sha}"
    assert _locked_word("torchvision", "https://x/v.git", sha) == f"torchvision@{sha}"
    word = _locked_word("my-ext", "file:///srv/git/my-ext", sha)
    assert word == f"git+file:///srv/git/my-ext@{sha}"
    assert _name_and_ref(word) == ("my-ext", sha)
    assert split_with([word], TABLE) == ([], [word])


@pytest.mark.parametrize(("rocm", "hip", "short"), [
    ("7.2.1", "", "72"), ("6.4.4", "", "64"), ("10.0.0", "", ""), ("10.0.0", "7.15.1", "715"),
    ("", "", "")])
def test_the_library_short_code_comes_from_hip_where_rocm_cannot_tell(
        rocm: str, hip: str, short: str) -> None:
    """bitsandbytes names its library from HIP's major.minor (its CMakeLists.txt reads
    hipconfig); ROCm's is the same before 10.0 and not from 10.0 on."""
    from rocmforge.plan.extensions import library_version_short

    assert library_version_short(rocm, hip) == short
    (bnb,) = extension_choices([parse_source("bitsandbytes", TABLE, {})], TABLE, ["gfx1100"],
                               jobs=1, cores=1, mem_total_gib=8.0,
                               rocm_short=library_version_short(rocm, hip))
    assert ("-DROCM_VERSION=" + short in bnb.pre_build[0]) == bool(short)
    assert not any(a.endswith("=") or "{" in a for a in bnb.pre_build[0])


def test_apex_is_built_at_the_branch_of_the_torch_being_built() -> None:
    """ROCm/apex's README pairs release/1.N.0 with torch 2.N."""
    assert parse_source("apex", TABLE, {}, "2.7.1").ref == "release/1.7.0"
    assert parse_source("apex", TABLE, {}, "").ref == "master"
    assert parse_source("apex@release/1.7.0", TABLE, {}, "2.7.1").ref == "release/1.7.0"
    with pytest.raises(UsageError) as caught:
        parse_source("apex@release/1.6.0", TABLE, {}, "2.7.1")
    assert caught.value.what == ("apex at release/1.6.0 pairs with torch 2.6, but this build "
                                 "makes torch 2.7.1")


def test_the_targets_a_tree_lists_are_read_with_the_recipes_pattern() -> None:
    """The patterns of config/extensions.toml against the upstream lines they cite."""
    from rocmforge.knowledge.extensions import targets_in, unaccepted_targets

    ck = next(b for b in TABLE.recipes["flash-attention"].backends if b.name == "ck")
    main = ('    allowed_archs = ["native", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", '
            '"gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201"]\n')
    assert targets_in(main, ck.targets_pattern) == ck.targets
    vllm = TABLE.recipes["vllm"]
    cmake = ('set(HIP_SUPPORTED_ARCHS "gfx906;gfx908;gfx90a;gfx942;gfx950;gfx1030;gfx1100;'
             'gfx1101;gfx1102;gfx1103;gfx1150;gfx1151;gfx1152;gfx1153;gfx1200;gfx1201")\n')
    listed = targets_in(cmake, vllm.targets_pattern)
    assert len(listed) == 16 and "gfx1036" not in listed
    refusal = unaccepted_targets("vllm", "main", "CMakeLists.txt", listed, ["gfx942", "gfx1036"])
    assert refusal is not None and refusal.what.startswith(
        "vllm at main does not build for gfx1036: its CMakeLists.txt accepts gfx906, ")
    assert unaccepted_targets("vllm", "main", "CMakeLists.txt", listed, ["gfx942"]) is None


def test_the_variables_a_recipe_sets_are_the_ones_its_tree_must_read() -> None:
    from rocmforge.knowledge.extensions import unread_variables

    (fa,) = choices(["flash-attention"], ["gfx1030"])
    assert fa.reads == ("setup.py",)
    assert fa.read_vars == ("GPU_ARCHS", "BUILD_TARGET", "FLASH_ATTENTION_TRITON_AMD_ENABLE")
    # flash-attention@0251105a's setup.py lines that read them (config/extensions.toml).
    text = ('BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")\n'
            'ROCM_BACKEND = "triton" if os.getenv("FLASH_ATTENTION_TRITON_AMD_ENABLE", '
            '"FALSE") == "TRUE" else "ck"\n'
            'archs = [arch.lower() for arch in os.getenv("GPU_ARCHS", "native").split(";")]\n')
    assert unread_variables("flash-attention", "main", fa.reads, [text], fa.read_vars) is None
    refusal = unread_variables("flash-attention", "x", fa.reads,
                               [text.replace("GPU_ARCHS", "ARCHS")], fa.read_vars)
    assert refusal is not None
    assert refusal.what == "flash-attention at x reads no GPU_ARCHS in setup.py"
    (bnb,) = choices(["bitsandbytes"], ["gfx942"])
    assert (bnb.reads, bnb.read_vars) == (("CMakeLists.txt", "setup.py"),
                                          ("BNB_ROCM_ARCH", "BNB_SKIP_CMAKE"))


def test_a_locked_folder_is_rebuilt_from_its_path_and_named_as_the_plan_names_it() -> None:
    """A plain folder has no commit: the lock keeps its path and digest, and a locked build
    names it by its path again (the same name the plan gives it)."""
    from rocmforge.sources.locked import _locked_word, _name_and_ref

    word = _locked_word("my-ext", "/srv/src/my ext", "")
    assert word == "/srv/src/my ext"
    assert _name_and_ref(word) == ("my-ext", "")
    assert parse_source(word, TABLE, {}).name == "my-ext"
