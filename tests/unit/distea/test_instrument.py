"""Code-level instrumentation (the 3.11 default tracer), in process, on generated programs.

Differential: a generated module whose functions reach each other in every way a reference
can be held (direct calls, a dispatch dict, ``functools.partial``, a decorator's closure, a
lambda, a nested function, a method, a generator, a callback list, comprehensions) runs once
as compiled by Python under ``sys.setprofile`` (which sees every call) and once instrumented.
The instrumented run must record exactly the ``def`` functions the profiler saw called (lambdas
are left as written), under the qualnames CPython gives them, and compute the same result;
and the instrumented code must run unchanged where no tracer defined its names.
"""

import sys
import textwrap
from types import CodeType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from distea import _instrument
from tests.conftest import examples

STYLES = (
    *("direct", "table", "partial", "decorated", "lambda", "nested", "method", "gen", "cb"),
    *("complambda", "dictcomp"),
)


def _program(calls: list[list[tuple[int, str]]]) -> str:
    """Functions f0..fN; fi calls fj (j > i) in the given styles; references taken up front."""
    n = len(calls)
    lines = ["import functools", "", "def deco(fn):", "    @functools.wraps(fn)"]
    lines += ["    def wrapper(*a, **k):", "        return fn(*a, **k)", "    return wrapper", ""]
    for i, targets in enumerate(calls):
        lines.append("@deco" if i % 3 == 2 else "")
        lines.append(f"def f{i}(x):")
        lines.append(f'    """f{i}"""')
        lines.append(f"    total = x + {i}")
        for j, style in targets:
            call = {
                "direct": f"f{j}(x)",
                "table": f'TABLE["f{j}"](x)',
                "partial": f"P{j}()",
                "decorated": f"D{j}(x)",
                "lambda": f"L{j}(x)",
                "method": f"C().m{j}(x)",
                "gen": f"sum(G{j}(x))",
                "cb": f"sum(cb(x) for cb in CALLBACKS[{j}])",
                "nested": "inner(x)",
                "complambda": f"sum(g(x) for g in [lambda y: f{j}(y) for _ in range(1)])",
                "dictcomp": f"sum({{k: (lambda: f{j}(x))() for k in [(lambda: 0)()]}}.values())",
            }[style]
            if style == "nested":
                lines += ["    def inner(y):", f"        return f{j}(y) + 1"]
            lines.append(f"    total += {call}")
        lines += ["    return total", ""]
    for j in range(n):
        lines.append(f"P{j} = functools.partial(f{j}, 1)")
        lines.append(f"D{j} = deco(f{j})")
        lines.append(f"L{j} = lambda x: f{j}(x) * 2")
        lines.append(f"def G{j}(x):\n    yield f{j}(x)\n    yield 1")
    lines.append("TABLE = {" + ", ".join(f'"f{j}": f{j}' for j in range(n)) + "}")
    lines.append("CALLBACKS = {" + ", ".join(f"{j}: [f{j}, L{j}]" for j in range(n)) + "}")
    lines.append("class C:")
    for j in range(n):
        lines += [f"    def m{j}(self, x):", f"        return f{j}(x)"]
    if not n:
        lines.append("    pass")
    return "\n".join(lines) + "\n"


class _Clock:
    clock = 0


def _recorder() -> dict[str, Any]:
    epoch: dict[str, list[int]] = {}
    trace = _Clock()

    def first(key: str) -> list[int]:
        trace.clock += 1
        span = epoch[key] = [trace.clock, trace.clock]
        return span

    return {
        _instrument.EPOCH: epoch,
        _instrument.FIRST: first,
        _instrument.TRACE: trace,
    }


def _profiled(source: str) -> tuple[Any, set[str]]:
    namespace: dict[str, Any] = {"__name__": "gen"}
    exec(compile(source, "<gen>", "exec"), namespace)
    seen: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        code: CodeType = frame.f_code
        if event == "call" and code.co_filename == "<gen>":
            if not code.co_name.startswith("<"):
                seen.add("gen." + code.co_qualname)

    sys.setprofile(profile)
    try:
        result = namespace["f0"](1)
    finally:
        sys.setprofile(None)
    return result, seen


def _instrumented(source: str, traced: bool = True) -> tuple[Any, dict[str, list[int]]]:
    recorder = _recorder()
    namespace: dict[str, Any] = {"__name__": "gen", **(recorder if traced else {})}
    exec(_instrument.compile_instrumented(source, "<gen>", "gen"), namespace)
    epoch = recorder[_instrument.EPOCH]
    epoch.clear()  # module-level code (decorating) ran at import; only the call counts
    return namespace["f0"](1), epoch


_CALLS = st.integers(min_value=1, max_value=6).flatmap(
    lambda n: st.tuples(
        *[
            st.lists(
                st.tuples(st.integers(min_value=i + 1, max_value=n - 1), st.sampled_from(STYLES)),
                max_size=3,
            )
            if i < n - 1
            else st.just([])
            for i in range(n)
        ]
    )
)


@settings(max_examples=examples(120), deadline=None)
@given(calls=_CALLS)
def test_every_call_is_recorded_however_reached(calls):
    source = _program([list(c) for c in calls])
    expected, called = _profiled(source)
    got, epoch = _instrumented(source)
    assert got == expected
    assert set(epoch) == called
    assert all(first <= last for first, last in epoch.values())
    untraced, nothing = _instrumented(source, traced=False)  # e.g. shipped by cloudpickle
    assert untraced == expected and not nothing


def test_references_taken_before_instrumenting_existing_functions():
    """Functions that exist before tracing get recording code objects in place (__code__), so a
    dispatch table, a partial or a closure built earlier reaches the recording code."""
    source = textwrap.dedent(
        """
        import functools
        def f(x):
            return x + 1
        TABLE = {"f": f}
        P = functools.partial(f, 2)
        def outer():
            def inner():
                return f(3)
            return inner
        CLOSURE = outer()
        """
    )
    namespace: dict[str, Any] = {"__name__": "mod", **_recorder()}
    exec(compile(source, "/wf/mod.py", "exec"), namespace)
    pairs = _instrument.code_pairs(
        compile(source, "/wf/mod.py", "exec"),
        _instrument.compile_instrumented(source, "/wf/mod.py", "mod"),
    )
    for obj in (namespace["f"], namespace["CLOSURE"]):
        obj.__code__ = pairs[obj.__code__]
    epoch = namespace[_instrument.EPOCH]
    assert namespace["TABLE"]["f"](1) == 2 and namespace["P"]() == 3
    assert set(epoch) == {"mod.f"}
    assert namespace["CLOSURE"]() == 4
    assert set(epoch) == {"mod.f", "mod.outer.<locals>.inner"}


def test_docstrings_line_numbers_and_signatures_are_kept():
    source = 'def f(a, b=2, *c, d, **e):\n    """doc"""\n    return 1 / a\n'
    namespace: dict[str, Any] = {"__name__": "m", **_recorder()}
    exec(_instrument.compile_instrumented(source, "/wf/m.py", "m"), namespace)
    f = namespace["f"]
    assert f.__doc__ == "doc"
    assert f.__code__.co_varnames[:5] == ("a", "b", "d", "c", "e")
    try:
        f(0, d=1)
    except ZeroDivisionError as e:
        assert e.__traceback__ is not None
        assert e.__traceback__.tb_next.tb_lineno == 3  # the line of `return 1 / a`
    epoch = namespace[_instrument.EPOCH]
    assert epoch["m.f"][1] >= epoch["m.f"][0]  # a raise counts as a return


def test_module_body_recorded_after_future_imports():
    source = '"""doc"""\nfrom __future__ import annotations\nX = 1\n'
    tree, keys = _instrument.instrument(source, "Snakefile", "Snakefile", "Snakefile.<module>")
    assert keys == ["Snakefile.<module>"]
    namespace: dict[str, Any] = {**_recorder()}
    exec(compile(tree, "Snakefile", "exec"), namespace)
    assert set(namespace[_instrument.EPOCH]) == {"Snakefile.<module>"}
    assert namespace["__doc__"] == "doc"


def test_code_pairs_refuse_an_edited_file():
    """Functions compiled from another version of the file find no counterpart (they keep
    running as they are); an unchanged function does; a lambda keeps its own code."""
    source = "def f():\n    return 2\n\ndef g():\n    return 5\n\nL = lambda: 7\n"
    old: dict[str, Any] = {}
    exec(compile(source, "/wf/m.py", "exec"), old)
    edited = source.replace("return 2", "return 3")  # the file as it reads now
    mapped = _instrument.code_pairs(
        compile(edited, "/wf/m.py", "exec"),
        _instrument.compile_instrumented(edited, "/wf/m.py", "m"),
    )
    assert old["f"].__code__ not in mapped  # never swapped for the edited body
    old["g"].__code__ = mapped[old["g"].__code__]  # an unchanged body is the same code
    old["L"].__code__ = mapped[old["L"].__code__]
    assert (old["f"](), old["g"](), old["L"]()) == (2, 5, 7)


def test_functions_compiled_by_numba_style_decorators_are_left_as_written():
    """A bytecode compiler (Numba's ``@njit``, ``@jitclass``) must not meet the recording code;
    such functions keep their code (a query naming one uses the module body)."""
    source = textwrap.dedent(
        """
        import numba
        @numba.njit(cache=True)
        def fast(x):
            return x + 1
        @jit
        def also(x):
            return x
        @jitclass([])
        class Spec:
            def method(self):
                return 1
        def plain(x):
            return x
        """
    )
    tree, keys = _instrument.instrument(source, "/wf/m.py", "m")
    assert keys == ["m.plain"]


def test_a_query_naming_a_lambda_starts_at_its_enclosing_function():
    """Lambdas are left as written: a query naming one uses the innermost recorded function
    that encloses it (the lambda exists only once that function ran), else the module body."""
    from distea._model import Trace
    from distea._query import _enclosing_body

    trace = Trace()
    for name in ("m.f", "m.<module>", "m.C.meth", "Snakefile.<module>"):
        trace.function_id(name)
    assert _enclosing_body(trace, "m.f.<locals>.<lambda>") == "m.f"
    assert _enclosing_body(trace, "m.f.<locals>.g.<locals>.<lambda>") == "m.f"
    assert _enclosing_body(trace, "m.C.meth.<locals>.<lambda>") == "m.C.meth"
    assert _enclosing_body(trace, "m.C.<lambda>") == "m.<module>"
    assert _enclosing_body(trace, "Snakefile.<lambda>") == "Snakefile.<module>"
