"""The process-global random generators at an invocation's start, as a fresh job has them.

Under ``--executor local`` a job's process builds the template itself (``stickyinvoc.state``),
so its script draws from generators as that build left them: seeded from the OS when the
process started (``random``, ``numpy.random``, torch's default generator), or from the seed the
template chose (``torch.manual_seed(0)`` before initialising a model, ``transformers.set_seed``).
A sticky invocation starts from the same place: a generator the template seeded with a fixed
seed starts from its state right after the build; any other is seeded afresh from the OS.

Which generators the template left seeded is recorded while it loads and builds, not guessed
from the states: the generators' functions are wrapped for that time (also in modules the build
imports; libraries' helpers such as ``transformers.set_seed`` call them), and the last call that
sets a generator decides: a seed (not ``None``) makes it fixed, a seed from the OS
(``random.seed()``, ``torch.seed()``) makes it random again, and setting a state back makes it
what it was when that state was read (the "temporary seed" idiom: read the state, seed, draw,
set the state back, leaves it random), or fixed for a state from elsewhere (a checkpoint). A
change of torch's seed through another way (``torch.default_generator.manual_seed``) is seen
by its ``initial_seed()``. Not seen: a seed computed per process (``os.getpid()``,
``os.urandom``), which then counts as fixed.
"""

import builtins
import gc
import operator
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

from ._hazards import torch_cuda_initialized


@dataclass(frozen=True)
class Generator:
    """One process-global generator: where it lives and its documented API."""

    name: str
    modules: tuple[str, ...]
    """The modules whose functions below set it (re-exports included)."""
    seed: tuple[str, ...]
    """Functions seeding it: fixed with a seed, from the OS with none (or ``None``)."""
    os_seed: tuple[str, ...]
    """Functions seeding it from the OS."""
    get_state: str
    set_state: str
    reseed: str
    """The function that seeds it from the OS, as a fresh process does."""


GENERATORS = (
    Generator("random", ("random",), ("seed",), (), "getstate", "setstate", "seed"),
    Generator(
        "numpy.random",
        ("numpy.random", "numpy.random.mtrand"),
        ("seed",),
        (),
        "get_state",
        "set_state",
        "seed",
    ),
    Generator(
        "torch",
        ("torch", "torch.random"),
        ("manual_seed",),
        ("seed",),
        "get_rng_state",
        "set_rng_state",
        "seed",
    ),
)


_WATCHED = tuple(
    sorted(
        {name for g in GENERATORS for name in g.modules}
        | {"random", "numpy.random", "numpy.random.bit_generator", "torch"}
    )
)
"""The modules whose functions :class:`SeedWatch` wraps (generators, makers, torch's threads)."""


_KINDS = tuple(
    (
        g,
        (
            *((attr, "seed") for attr in g.seed),
            *((attr, "os") for attr in g.os_seed),
            (g.set_state, "set"),
            (g.get_state, "get"),
        ),
    )
    for g in GENERATORS
)
"""Each generator with its functions to wrap and what a call to each does."""


def _initializing(module: Optional[ModuleType]) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def _module(generator: Generator) -> Optional[ModuleType]:
    return sys.modules.get(generator.modules[0])


class SeedWatch:
    """Around a template's load and build: which generators it left seeded with a fixed
    seed (:attr:`seeded`, once the watch is over)."""

    def __init__(self) -> None:
        self.seeded: set[str] = set()
        self.from_os: list[Any] = []
        """Generator objects the build made from the OS."""
        self._entropy: set[int] = set()
        """Entropy numpy drew from the OS for a ``SeedSequence`` while the watch was on (a
        ``PCG64()``, ``Generator(MT19937())`` or ``RandomState()`` made without a seed)."""
        self._fixed: dict[str, bool] = {}  # generator -> fixed after its last setting
        self._read: list[tuple[str, Any, bool]] = []  # states read: generator, state, fixed
        self._torch_seed: Optional[int] = None  # torch.initial_seed() after the last call
        self._patched: list[tuple[ModuleType, str, Any, Any]] = []
        self._done: set[tuple[int, str]] = set()  # (id of module or class, attribute) patched
        self._final: dict[str, ModuleType] = {}
        """Watched modules a pass saw after they finished importing: an import after which a
        module is the same object adds nothing to wrap there (every import runs a pass, tens
        of thousands while a model library loads)."""
        self._all_final: Optional[tuple[Optional[ModuleType], ...]] = None
        """``sys.modules``' watched entries when every one of them was final."""
        self._saved_import: Any = None
        self._active = False
        self.torch_threads: Optional[int] = None
        """What the build passed to ``torch.set_num_threads``, if it called it: a fresh job's
        torch keeps that size, not the job's ``threads`` (:func:`._isolation.job_threads`)."""

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
        if self._saved_import is not None:
            builtins.__import__ = self._saved_import
            self._saved_import = None
        self._patch_loaded()  # modules imported through importlib since the last import
        self._torch_seen_directly()
        self._active = False
        self._numpy_objects_from_os()
        for module, attr, original, wrapper in self._patched:
            if getattr(module, attr, None) is wrapper:
                setattr(module, attr, original)
        self._patched.clear()
        self._done.clear()
        self._final.clear()
        self._all_final = None
        self.seeded = {name for name, fixed in self._fixed.items() if fixed}

    def _patch_loaded(self) -> None:
        present = tuple(map(sys.modules.get, _WATCHED))
        final_now = self._all_final
        if final_now is not None and all(map(operator.is_, present, final_now)):
            return
        final = self._final
        todo = {
            name: module
            for name, module in zip(_WATCHED, present, strict=True)
            if module is not None and final.get(name) is not module
        }
        done = self._done
        self._patch_makers(done)
        self._patch_torch_threads(done)
        for generator, kinds in _KINDS:
            for name in generator.modules:
                module = todo.get(name)
                if module is None:
                    continue
                if generator.name == "torch" and self._torch_seed is None:
                    self._torch_seed = _initial_seed(module)
                for attr, kind in kinds:
                    original = getattr(module, attr, None)
                    if original is None or (id(module), attr) in done:
                        continue
                    wrapper = self._wrap(generator.name, kind, original)
                    setattr(module, attr, wrapper)
                    self._patched.append((module, attr, original, wrapper))
                    done.add((id(module), attr))
        importing = [name for name, module in todo.items() if _initializing(module)]
        final.update((name, module) for name, module in todo.items() if name not in importing)
        if not importing:
            self._all_final = present

    def _patch_torch_threads(self, done: set[tuple[int, str]]) -> None:
        torch = sys.modules.get("torch")
        original = getattr(torch, "set_num_threads", None)
        if torch is None or original is None or (id(torch), "set_num_threads") in done:
            return
        if getattr(getattr(torch, "__spec__", None), "_initializing", False):
            return  # torch adds its docstrings to its builtins while it imports: not yet

        def watched(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            if self._active:
                self.torch_threads = args[0] if args else next(iter(kwargs.values()), None)
            return result

        watched.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(torch, "set_num_threads", watched)  # noqa: B010 - torch has no stubs for it
        self._patched.append((torch, "set_num_threads", original, watched))
        done.add((id(torch), "set_num_threads"))

    def _wrap(self, name: str, kind: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def watched(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            if self._active:
                self._note(name, kind, args[0] if args else next(iter(kwargs.values()), None))
                self._note_result(name, kind, result)
            return result

        watched.__wrapped__ = original  # type: ignore[attr-defined]
        return watched

    def _patch_makers(self, done: set[tuple[int, str]]) -> None:
        """Generator objects made from the OS (``random.Random()``,
        ``numpy.random.default_rng()``): a fresh job's are its own, so each invocation
        reseeds the template's (:meth:`Seeds.start`)."""
        random_module = sys.modules.get("random")
        cls = getattr(random_module, "Random", None)
        if cls is not None and (id(cls), "seed") not in done:
            original = cls.seed

            def seed(obj: Any, *args: Any, **kwargs: Any) -> Any:
                if self._active:
                    value = args[0] if args else kwargs.get("a")
                    self._note_object(obj, value is None)
                return original(obj, *args, **kwargs)

            cls.seed = seed
            self._patched.append((cls, "seed", original, seed))
            done.add((id(cls), "seed"))
        numpy_random = sys.modules.get("numpy.random")
        make = getattr(numpy_random, "default_rng", None)
        if (
            numpy_random is not None
            and make is not None
            and (id(numpy_random), "default_rng") not in done
        ):

            def default_rng(*args: Any, **kwargs: Any) -> Any:
                made = make(*args, **kwargs)
                if self._active and (args[0] if args else kwargs.get("seed")) is None:
                    self._note_object(made, True)
                return made

            numpy_random.default_rng = default_rng  # type: ignore[attr-defined]
            self._patched.append((numpy_random, "default_rng", make, default_rng))
            done.add((id(numpy_random), "default_rng"))
        # SeedSequence() without entropy draws it with this module's randbits: what it draws
        # during the build marks the bit generators it seeds (_numpy_objects_from_os).
        entropy_module = sys.modules.get("numpy.random.bit_generator")
        draw = getattr(entropy_module, "randbits", None)
        if draw is not None and (id(entropy_module), "randbits") not in done:

            def randbits(*args: Any, **kwargs: Any) -> Any:
                value = draw(*args, **kwargs)
                if self._active and isinstance(value, int):
                    self._entropy.add(value)
                return value

            entropy_module.randbits = randbits  # type: ignore[union-attr]
            self._patched.append((entropy_module, "randbits", draw, randbits))  # type: ignore[arg-type]
            done.add((id(entropy_module), "randbits"))

    def _numpy_objects_from_os(self) -> None:
        """numpy generator objects seeded with entropy the build drew from the OS: the bit
        generators of ``Generator(PCG64())``, ``PCG64()``, ``MT19937()``, ``RandomState()``
        (any bit generator, however made; found among the garbage collector's objects, where
        numpy's generators are tracked, by their seed sequence's entropy)."""
        numpy_random = sys.modules.get("numpy.random")
        bit_generator = getattr(numpy_random, "BitGenerator", None)
        if not self._entropy or bit_generator is None:
            return
        for obj in gc.get_objects():
            # type(), not isinstance(): a proxy's __class__ may run code (a deprecation warning)
            if not issubclass(type(obj), bit_generator):
                continue
            seed_seq = getattr(obj, "seed_seq", None) or getattr(obj, "_seed_seq", None)
            entropy = getattr(seed_seq, "entropy", None)
            if isinstance(entropy, int) and entropy in self._entropy:
                if not any(
                    o is obj or getattr(o, "bit_generator", None) is obj for o in self.from_os
                ):
                    self.from_os.append(obj)

    def _note_object(self, obj: Any, from_os: bool) -> None:
        # Held, not weakly referenced: numpy's Generator takes no weak references, and the
        # objects are small.
        self.from_os = [o for o in self.from_os if o is not obj]
        if from_os:
            self.from_os.append(obj)

    def _note(self, name: str, kind: str, value: Any) -> None:
        if kind == "seed":
            self._fixed[name] = value is not None
        elif kind == "os":
            self._fixed[name] = False
        elif kind == "set":
            read = next((fixed for n, state, fixed in self._read if state is value), None)
            self._fixed[name] = True if read is None else read

    def _note_result(self, name: str, kind: str, result: Any) -> None:
        if kind == "get":
            self._read.append((name, result, self._fixed.get(name, False)))
        if name == "torch":
            self._torch_seed = _initial_seed(sys.modules.get("torch"))

    def _torch_seen_directly(self) -> None:
        """torch's seed changed since the last wrapped call: set through another way
        (``torch.default_generator.manual_seed``), which counts as fixed."""
        now = _initial_seed(sys.modules.get("torch"))
        if now is not None and self._torch_seed is not None and now != self._torch_seed:
            self._fixed["torch"] = True


def _initial_seed(torch: Optional[ModuleType]) -> Optional[int]:
    try:
        return int(torch.initial_seed()) if torch is not None else None
    except Exception:  # noqa: BLE001 - a broken or partial torch
        return None


class Seeds:
    """Per template, the generators its build seeded and their states as it left them."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Any]] = {}
        self.from_os: dict[str, list[Any]] = {}
        self.in_state: dict[str, list[tuple[Any, Callable[[], Any]]]] = {}
        """The generator objects in the template's state (not from the OS), each with the
        call that puts back its state as the build left it."""

    def built(
        self,
        template: str,
        seeded: Collection[str],
        from_os: Collection[Any] = (),
        state: Any = None,
    ) -> None:
        """``template`` was built (``seeded``: what its build seeded with a fixed seed;
        ``from_os``: the generator objects it made from the OS; ``state``: the state it
        returned): keep those generators' states, and those of the generator objects in
        ``state``, as the build left them."""
        self.from_os[template] = list(from_os)
        reseeded = {id(_bits(o)) for o in from_os}
        self.in_state[template] = [
            (obj, restore)
            for obj in generators_in(state)
            if id(_bits(obj)) not in reseeded and (restore := _state_restorer(obj)) is not None
        ]
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
        for obj in self.from_os.get(template or "", ()):
            _reseed_object(obj)
        for _, restore in self.in_state.get(template or "", ()):
            try:  # a job in this process (direct mode) drew from it
                restore()
            except Exception:  # noqa: BLE001 - a generator that cannot be set back: as it is
                pass
        for generator in GENERATORS:
            module = _module(generator)
            if module is None:
                continue
            try:
                if generator.name in kept:
                    getattr(module, generator.set_state)(kept[generator.name])
                elif generator.name == "torch" and not torch_cuda_initialized():
                    # torch.seed() also reseeds every accelerator's generators, lazily, by
                    # capturing a stack trace each (ms per invocation): the CPU one is all
                    # there is until CUDA is initialised.
                    module.default_generator.seed()
                else:
                    getattr(module, generator.reseed)()
            except Exception:  # noqa: BLE001 - a broken library: its generator as it is
                pass


def _reseed_object(obj: Any) -> None:
    """A generator object seeded afresh from the OS, as a fresh job's own would be."""
    if obj is None:
        return
    try:
        bit_generator = getattr(obj, "bit_generator", None)
        if bit_generator is not None:  # numpy.random.Generator
            bit_generator.state = type(bit_generator)().state
        elif hasattr(obj, "state") and hasattr(obj, "seed_seq"):  # a numpy bit generator
            obj.state = type(obj)().state
        else:  # random.Random
            obj.seed()
    except Exception:  # noqa: BLE001 - a generator that cannot be reseeded: as it is
        pass


STATE_WALK_LIMIT = 5000
"""The most objects of a template's state looked at for generator objects."""

_LEAVES = (str, bytes, bytearray, int, float, complex, bool, type(None), ModuleType, type)


def generators_in(state: Any, depth: int = 4) -> list[Any]:
    """The generator objects in a template's state: ``random.Random`` (and subclasses),
    numpy's ``Generator``, bit generators and ``RandomState``, ``torch.Generator``; found in
    dicts, lists, tuples and sets and in objects' attributes (``vars``, no properties run),
    ``depth`` levels deep, at most :data:`STATE_WALK_LIMIT` objects. A fresh job builds its
    template itself, so each starts where the build left it (what direct mode restores)."""
    kinds = _generator_types()
    found: list[Any] = []
    seen: set[int] = set()
    todo = [(state, 0)]
    while todo and len(seen) < STATE_WALK_LIMIT:
        obj, level = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kind = type(obj)
        if kinds and issubclass(kind, kinds):
            found.append(obj)
            continue
        if issubclass(kind, _LEAVES) or level >= depth:
            continue
        if issubclass(kind, dict):
            children = list(dict.values(obj))
        elif issubclass(kind, (list, tuple, set, frozenset)):
            children = list(obj)
        elif callable(obj):  # a function, a class, a model (its parameters): not walked
            continue
        else:
            try:
                attrs = object.__getattribute__(obj, "__dict__")
            except AttributeError:
                continue
            children = list(attrs.values()) if type(attrs) is dict else []
        todo.extend((child, level + 1) for child in children)
    return found


def _generator_types() -> tuple[type, ...]:
    kinds: list[type] = []
    random_module = sys.modules.get("random")
    if random_module is not None:
        kinds.append(random_module.Random)
    numpy_random = sys.modules.get("numpy.random")
    for name in ("Generator", "BitGenerator", "RandomState"):
        cls = getattr(numpy_random, name, None)
        if isinstance(cls, type):
            kinds.append(cls)
    torch = sys.modules.get("torch")
    cls = getattr(torch, "Generator", None)
    if isinstance(cls, type):
        kinds.append(cls)
    return tuple(kinds)


def _bits(obj: Any) -> Any:
    """The bit generator under a numpy ``Generator`` or ``RandomState`` (the object itself
    otherwise): what a reseed from the OS changes."""
    for name in ("bit_generator", "_bit_generator"):
        try:
            found = getattr(obj, name, None)
        except Exception:  # noqa: BLE001 - an object whose attribute lookup fails: itself
            found = None
        if found is not None:
            return found
    return obj


def _state_restorer(obj: Any) -> Optional[Callable[[], Any]]:
    """A call that puts a generator object's state back as it is now (None where it
    cannot be read)."""
    try:
        bit_generator = getattr(obj, "bit_generator", None)
        if bit_generator is not None:  # numpy.random.Generator
            state = bit_generator.state
            return lambda: setattr(bit_generator, "state", state)
        if hasattr(obj, "get_state") and hasattr(obj, "set_state"):  # RandomState, torch
            state = obj.get_state()
            return lambda: obj.set_state(state)
        if hasattr(obj, "state") and hasattr(obj, "seed_seq"):  # a numpy bit generator
            state = obj.state
            return lambda: setattr(obj, "state", state)
        state = obj.getstate()  # random.Random
        return lambda: obj.setstate(state)
    except Exception:  # noqa: BLE001 - an unreadable generator: left as it is
        return None
