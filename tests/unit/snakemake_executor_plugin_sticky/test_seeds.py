"""Which global generators a template seeds (``_seeds.SeedWatch``), and where an invocation's
generators start (``_seeds.Seeds``): as the build left a seeded one, afresh from the OS
otherwise."""

import importlib
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from snakemake_executor_plugin_sticky._seeds import GENERATORS, Seeds, SeedWatch, generators_in


@pytest.fixture(autouse=True)
def generators_back():
    saved = random.getstate(), np.random.get_state()
    yield
    random.setstate(saved[0])
    np.random.set_state(saved[1])


def test_a_seed_with_a_value_marks_its_generator_and_the_functions_are_put_back():
    original = random.seed
    with SeedWatch() as watch:
        random.seed(0)
        np.random.seed(None)  # from the OS: as unseeded as a fresh process
    assert watch.seeded == {"random"}
    assert random.seed is original


def test_the_last_setting_decides_a_seed_then_a_seed_from_the_os_is_random():
    with SeedWatch() as watch:
        random.seed(0)
        np.random.seed(0)
        random.random()
        random.seed()  # re-randomised for sampling
        np.random.seed(None)
    assert watch.seeded == set()


def test_the_temporary_seed_idiom_leaves_the_generators_random():
    """Read the state, seed, draw, set the state back: the streams are the OS's again."""
    with SeedWatch() as watch:
        saved = random.getstate(), np.random.get_state()
        random.seed(1234)
        np.random.seed(1234)
        np.random.standard_normal(8)
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    assert watch.seeded == set()
    with SeedWatch() as watch:  # a state read after a fixed seed is fixed
        random.seed(5)
        fixed = random.getstate()
        random.seed()
        random.setstate(fixed)
    assert watch.seeded == {"random"}


def test_numpys_mtrand_alias_is_watched():
    with SeedWatch() as watch:
        np.random.mtrand.seed(11)
    assert watch.seeded == {"numpy.random"}


def test_set_state_with_a_fixed_state_counts_as_seeding():
    state = np.random.RandomState(3).get_state()
    with SeedWatch() as watch:
        np.random.set_state(state)
    assert watch.seeded == {"numpy.random"}


def test_a_seed_in_a_module_the_build_imports_is_seen(tmp_path: Path):
    """transformers.set_seed and lightning.seed_everything call the generators' own seeders,
    from modules imported during the build."""
    (tmp_path / "seeds_helper_lib.py").write_text(
        "import random\nimport numpy\n\ndef set_seed(s):\n"
        "    random.seed(s)\n    numpy.random.seed(s)\n\nset_seed(1)\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with SeedWatch() as watch:
            importlib.import_module("seeds_helper_lib")  # seeds while it is imported
        assert watch.seeded == {"random", "numpy.random"}
        with SeedWatch() as watch:
            exec("import seeds_helper_lib as h\nh.set_seed(None)\n", {})
        assert watch.seeded == set()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("seeds_helper_lib", None)


def test_a_seeder_bound_during_the_build_no_longer_marks_afterwards():
    with SeedWatch() as watch:
        from random import seed as bound  # kept by a module loaded during the build
    bound(5)
    assert watch.seeded == set()


def test_a_seeded_template_starts_every_invocation_where_its_build_left_the_generators():
    seeds = Seeds()
    random.seed(0)
    np.random.seed(0)
    seeds.built("seeded", {"random", "numpy.random"})
    expected = random.random(), np.random.random()
    random.random()  # an invocation drew more
    seeds.start("seeded")
    assert (random.random(), np.random.random()) == expected
    seeds.start("seeded")
    assert (random.random(), np.random.random()) == expected


def test_other_generators_and_other_templates_are_seeded_afresh():
    seeds = Seeds()
    random.seed(0)
    seeds.built("seeded", {"random"})
    seeds.built("plain", set())
    draws = set()
    for template in ("plain", "plain", None, "unknown"):
        seeds.start(template)
        draws.add(random.random())
    assert len(draws) == 4  # from the OS each time
    seeds.start("seeded")
    np_first = np.random.random()
    seeds.start("seeded")
    assert np.random.random() != np_first  # numpy was not seeded by that build


def test_torch_manual_seed_is_seen_through_both_of_its_modules():
    torch = pytest.importorskip("torch")
    saved = torch.get_rng_state()
    try:
        with SeedWatch() as watch:
            torch.random.manual_seed(4)
        assert watch.seeded == {"torch"}
        with SeedWatch() as other:
            torch.manual_seed(1)
            torch.seed()  # from the OS: random again
        assert other.seeded == set()
        with SeedWatch() as other:
            torch.default_generator.manual_seed(11)  # no module function: seen by its seed
        assert other.seeded == {"torch"}
        torch.manual_seed(4)
        seeds = Seeds()
        seeds.built("model", watch.seeded)
        first = torch.rand(2)
        seeds.start("model")
        assert torch.equal(torch.rand(2), first)
    finally:
        torch.set_rng_state(saved)


def test_every_generator_names_its_documented_api():
    """Each generator's functions exist in its library (a renamed API fails here)."""
    for generator in GENERATORS:
        module = pytest.importorskip(generator.modules[0])
        names = (*generator.seed, *generator.os_seed, generator.get_state, generator.set_state)
        for attr in (*names, generator.reseed):
            assert callable(getattr(module, attr)), (generator.name, attr)
        for extra in generator.modules[1:]:
            assert callable(getattr(importlib.import_module(extra), names[0]))


def test_generator_objects_the_build_makes_from_the_os_are_reseeded_at_each_start():
    """A state holding np.random.default_rng() or random.Random(): a fresh job's are its own."""
    with SeedWatch() as watch:
        rng, rnd = np.random.default_rng(), random.Random()
        fixed = np.random.default_rng(7), random.Random(7)
    assert len(watch.from_os) == 2
    seeds = Seeds()
    seeds.built("t", watch.seeded, watch.from_os)
    draws = set()
    for _ in range(3):
        seeds.start("t")
        draws.add((rng.random(), rnd.random()))
    assert len(draws) == 3
    seeds.start("t")
    assert (fixed[0].random(), fixed[1].random()) == (
        np.random.default_rng(7).random(),
        random.Random(7).random(),
    )
    # the makers are put back after the build
    assert random.Random.seed.__module__ == "random"
    assert np.random.default_rng.__module__ != SeedWatch.__module__


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.random.Generator(np.random.PCG64()),
        lambda: np.random.PCG64(),
        lambda: np.random.MT19937(),
        lambda: np.random.Philox(),
        lambda: np.random.SFC64(),
        lambda: np.random.PCG64DXSM(),
        lambda: np.random.RandomState(),
    ],
    ids=["Generator(PCG64())", "PCG64()", "MT19937()", "Philox()", "SFC64()", "PCG64DXSM()",
         "RandomState()"],
)  # fmt: skip
def test_numpy_generator_objects_made_from_the_os_however_made_are_reseeded(make):
    """Every documented way to make a numpy generator without a seed (numpy.random's bit
    generators, a Generator around one, the legacy RandomState) draws its entropy from the OS:
    a fresh job's are its own (found by the red team of SHADHO's asynchronous search: trials
    forked from one worker replayed one PCG64 stream). One made with a seed is left alone."""
    with SeedWatch() as watch:
        made, fixed = make(), np.random.Generator(np.random.PCG64(7))
    assert len(watch.from_os) == 1
    seeds = Seeds()
    seeds.built("t", watch.seeded, watch.from_os)
    draw = made.random if hasattr(made, "random") else made.random_raw
    draws = set()
    for _ in range(3):
        seeds.start("t")
        draws.add(float(draw()))
    assert len(draws) == 3
    seeds.start("t")
    assert fixed.random() == np.random.Generator(np.random.PCG64(7)).random()
    import numpy.random.bit_generator as entropy

    assert entropy.randbits.__module__ != SeedWatch.__module__  # put back after the build


def test_a_watched_module_is_looked_at_until_its_import_finished(monkeypatch):
    """Each import runs a pass over the watched modules (tens of thousands while a model
    library loads); a module whose import finished is skipped until it is replaced, one still
    importing is looked at again: its seeders may appear after its last nested import."""
    from snakemake_executor_plugin_sticky import _seeds

    fake = _seeds.Generator("fakegen", ("fakegen",), ("seed",), (), "get", "set", "seed")
    kinds = (("seed", "seed"), ("set", "set"), ("get", "get"))
    monkeypatch.setattr(_seeds, "GENERATORS", (fake,))
    monkeypatch.setattr(_seeds, "_KINDS", ((fake, kinds),))
    monkeypatch.setattr(_seeds, "_WATCHED", ("fakegen",))
    spec = importlib.machinery.ModuleSpec("fakegen", None)
    spec._initializing = True  # type: ignore[attr-defined]
    module = type(sys)("fakegen")
    module.__spec__ = spec
    monkeypatch.setitem(sys.modules, "fakegen", module)
    with SeedWatch() as watch:
        module.seed = lambda value=None: None  # defined after the module's nested imports
        exec("import json", {})  # an import ends: a pass
        assert module.seed.__name__ == "watched"
        spec._initializing = False  # type: ignore[attr-defined]
        exec("import json", {})  # the pass that finds its import finished
        module.get = lambda: 1
        exec("import json", {})  # final and the same object: not looked at again
        assert module.get.__name__ == "<lambda>"
        replacement = type(sys)("fakegen")
        replacement.seed = lambda value=None: None
        monkeypatch.setitem(sys.modules, "fakegen", replacement)
        exec("import json", {})  # a new module under the name: looked at
        assert replacement.seed.__name__ == "watched"
        replacement.seed(3)
    assert watch.seeded == {"fakegen"}


def test_the_generator_objects_in_a_templates_state_start_each_job_where_the_build_left_them():
    """Direct mode runs every job in the worker: a fixed-seed generator object the template
    returned (spawned from a SeedSequence, seeded with a string, held by an object) would go
    on from the last job's draws, where a fresh job's own build starts it afresh (red team
    25i's seedsequence_and_string_seeds); one made from the OS is reseeded, not put back."""
    torch = pytest.importorskip("torch")

    class Holder:
        def __init__(self) -> None:
            self.rng = np.random.default_rng(3)

    from_os = np.random.default_rng()
    state = {
        "streams": [np.random.default_rng(s) for s in np.random.SeedSequence(123).spawn(2)],
        "named": random.Random("experiment-A"),
        "held": Holder(),
        "legacy": np.random.RandomState(5),
        "torch": torch.Generator().manual_seed(4),
        "bits": np.random.PCG64(9),
        "from_os": from_os,
        "not_a_generator": [np.zeros(3), random, "text"],
    }
    assert len(generators_in(state)) == 8

    def draws() -> tuple:
        return (
            state["streams"][1].random(),
            state["named"].random(),
            state["held"].rng.random(),
            state["legacy"].rand(),
            torch.rand(1, generator=state["torch"]).item(),
            state["bits"].random_raw(),
        )

    seeds = Seeds()
    seeds.built("t", set(), [from_os], state)
    first, os_first = draws(), from_os.random()
    seeds.start("t")
    assert draws() == first
    seeds.start("t")
    assert from_os.random() != os_first or from_os.random() != os_first  # reseeded, not put back


def test_generator_objects_the_build_made_from_the_os_are_not_put_back():
    """A ``RandomState()`` or ``Generator(PCG64())`` made from the OS is reseeded per job (its
    bit generator is what the watch found): putting its state back would repeat its draws in
    every job (red team round 1's state_unseeded_generator_objects); a fixed one is put back."""
    with SeedWatch() as watch:
        state = {
            "legacy_os": np.random.RandomState(),
            "wrapped_os": np.random.Generator(np.random.PCG64()),
            "made_os": np.random.default_rng(),
            "named_os": random.Random(),
            "legacy_fixed": np.random.RandomState(3),
        }
    seeds = Seeds()
    seeds.built("t", watch.seeded, watch.from_os, state)
    assert [obj for obj, _ in seeds.in_state["t"]] == [state["legacy_fixed"]]
