"""The process-global random generators at an invocation's start, as a fresh job has them.

Under ``--executor local`` a job's process builds the template itself (``stickyinvoc.state``),
so its script draws from generators as that build left them: seeded from the OS when the
process started (``random``, ``numpy.random``, torch's default generator), or from the seed the
template chose (``torch.manual_seed(0)`` before initialising a model, ``transformers.set_seed``).
A sticky invocation starts from the same place: a generator the template seeded with a fixed
seed starts from its state right after the build; any other is seeded afresh from the OS.

Which generators the template seeded is recorded while it loads and builds, not guessed from
the states: the generators' seeding functions (and their ``set_state``) are wrapped for that
time (also in modules the build imports), and a call with a seed (not ``None``) marks its
generator; libraries' helpers (``transformers.set_seed``, ``lightning.seed_everything``) call
them.
"""

import builtins
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional


@dataclass(frozen=True)
class Generator:
    """One process-global generator: where it lives and its documented API."""

    name: str
    modules: tuple[str, ...]
    """The modules whose ``seeders`` attributes seed it (re-exports included)."""
    seeders: tuple[str, ...]
    get_state: str
    set_state: str
    reseed: str
    """The function that seeds it from the OS, as a fresh process does."""


GENERATORS = (
    Generator("random", ("random",), ("seed", "setstate"), "getstate", "setstate", "seed"),
    Generator(
        "numpy.random",
        ("numpy.random",),
        ("seed", "set_state"),
        "get_state",
        "set_state",
        "seed",
    ),
    Generator(
        "torch",
        ("torch", "torch.random"),
        ("manual_seed", "set_rng_state"),
        "get_rng_state",
        "set_rng_state",
        "seed",
    ),
)


def _module(generator: Generator) -> Optional[ModuleType]:
    return sys.modules.get(generator.modules[0])


class SeedWatch:
    """Around a template's load and build: which generators it seeded with a fixed seed."""

    def __init__(self) -> None:
        self.seeded: set[str] = set()
        self._patched: list[tuple[ModuleType, str, Any, Any]] = []
        self._saved_import: Any = None
        self._active = False

    def __enter__(self) -> "SeedWatch":
        self._active = True
        self._patch_loaded()
        original = builtins.__import__
        self._saved_import = original

        def watched_import(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            finally:
                if self._active:
                    self._patch_loaded()

        builtins.__import__ = watched_import
        return self

    def __exit__(self, *exc: Any) -> None:
        self._active = False
        if self._saved_import is not None:
            builtins.__import__ = self._saved_import
            self._saved_import = None
        self._patch_loaded()  # modules imported through importlib since the last import
        for module, attr, original, wrapper in self._patched:
            if getattr(module, attr, None) is wrapper:
                setattr(module, attr, original)
        self._patched.clear()

    def _patch_loaded(self) -> None:
        done = {(id(m), a) for m, a, _, _ in self._patched}
        for generator in GENERATORS:
            for name in generator.modules:
                module = sys.modules.get(name)
                if module is None:
                    continue
                for attr in generator.seeders:
                    original = getattr(module, attr, None)
                    if original is None or (id(module), attr) in done:
                        continue
                    wrapper = self._wrap(generator.name, original)
                    setattr(module, attr, wrapper)
                    self._patched.append((module, attr, original, wrapper))

    def _wrap(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def seeding(*args: Any, **kwargs: Any) -> Any:
            seed = args[0] if args else kwargs.get("seed", kwargs.get("a"))
            if self._active and seed is not None:
                self.seeded.add(name)
            return original(*args, **kwargs)

        seeding.__wrapped__ = original  # type: ignore[attr-defined]
        return seeding


class Seeds:
    """Per template, the generators its build seeded and their states as it left them."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Any]] = {}

    def built(self, template: str, seeded: Collection[str]) -> None:
        """``template`` was built (``seeded``: what its build seeded with a fixed seed): keep
        those generators' states as the build left them."""
        kept = self.kept[template] = {}
        for generator in GENERATORS:
            module = _module(generator)
            if generator.name not in seeded or module is None:
                continue
            try:
                kept[generator.name] = getattr(module, generator.get_state)()
            except Exception:  # noqa: BLE001 - an unreadable generator: reseeded instead
                continue

    def start(self, template: Optional[str]) -> None:
        """At a run of the script of a job of ``template``: each generator its build seeded as
        the build left it, every other loaded one seeded afresh from the OS."""
        kept = self.kept.get(template or "", {})
        for generator in GENERATORS:
            module = _module(generator)
            if module is None:
                continue
            try:
                if generator.name in kept:
                    getattr(module, generator.set_state)(kept[generator.name])
                else:
                    getattr(module, generator.reseed)()
            except Exception:  # noqa: BLE001 - a broken library: its generator as it is
                pass
