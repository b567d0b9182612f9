"""The optimizer's cached domain and posterior graph (snakemake_shadho._tpe) against hyperopt's
stock ``tpe.suggest`` with a fresh ``Domain`` per optimizer: on generated histories (statuses,
losses, pending trials, start-up counts, seeds) and spaces with conditional, integer,
quantised and log-scale labels, every asked trial is the same."""

import functools

from hyperopt import Domain, hp, tpe
from hypothesis import given, settings
from hypothesis import strategies as st

from snakemake_shadho import SubspaceOptimizer, _tpe
from tests.conftest import examples

SPACES = [
    {
        "x": hp.uniform("x", -3, 3),
        "act": hp.choice("act", [{"kind": "a"}, {"kind": "b", "w": hp.uniform("w", 0, 1)}]),
    },
    {
        "C": hp.loguniform("C", -4, 4),
        "degree": hp.randint("degree", 2, 6),
        "step": hp.quniform("step", 1, 9, 2),
        "gamma": hp.choice("gamma", ["scale", hp.lognormal("g", 0, 1)]),
    },
]


def _stock(space, records, n_startup_jobs):
    """An optimizer that builds everything afresh, as hyperopt does on each call."""
    opt = SubspaceOptimizer(space, records, n_startup_jobs)
    opt.domain = Domain(_tpe._unused, space)
    opt._suggest = functools.partial(tpe.suggest, n_startup_jobs=n_startup_jobs)
    return opt


def _history(space, outcomes, seed):
    """Records of randomly drawn trials, each ok (with its loss), failed or still pending."""
    drawn = SubspaceOptimizer(space, n_startup_jobs=10**6).ask(len(outcomes), seed)
    return [
        {
            "tid": s.tid,
            "vals": s.vals,
            "status": "ok" if isinstance(o, float) else o,
            "loss": o if isinstance(o, float) else None,
        }
        for s, o in zip(drawn, outcomes, strict=True)
    ]


outcome = st.one_of(
    st.floats(min_value=-5, max_value=5, allow_nan=False), st.sampled_from(["fail", "pending"])
)


@settings(max_examples=examples(30), deadline=None)
@given(
    which=st.sampled_from(range(len(SPACES))),
    outcomes=st.lists(outcome, max_size=12),
    n_startup_jobs=st.integers(1, 6),
    seeds=st.tuples(st.integers(0, 2**16), st.integers(0, 2**16)),
    n=st.integers(1, 4),
    told=st.lists(st.floats(min_value=-5, max_value=5, allow_nan=False), max_size=4),
)
def test_cached_optimizer_asks_what_stock_hyperopt_asks(
    which, outcomes, n_startup_jobs, seeds, n, told
):
    space = SPACES[which]
    records = _history(space, outcomes, seeds[0])
    cached = SubspaceOptimizer(space, records, n_startup_jobs)
    stock = _stock(space, records, n_startup_jobs)
    assert cached.domain is not stock.domain
    for round_seed in (seeds[1], seeds[1] + 1):
        got = cached.ask(n, round_seed)
        want = stock.ask(n, round_seed)
        assert [(s.tid, s.vals, s.params) for s in got] == [(s.tid, s.vals, s.params) for s in want]
        # Results told between the two asks reach the cached graph's next evaluation.
        for s, loss in zip(got, told, strict=False):
            cached.tell(s.tid, loss)
            stock.tell(s.tid, loss)


def test_optimizers_of_one_space_share_its_domain_and_posterior():
    space = SPACES[0]
    first = SubspaceOptimizer(space, n_startup_jobs=1)
    second = SubspaceOptimizer(space, n_startup_jobs=1)
    assert first.domain is second.domain
    assert SubspaceOptimizer(dict(space)).domain is not first.domain  # another space object
    for opt in (first, second):
        opt.tell(opt.ask(1, 0)[0].tid, 1.0)
        opt.ask(1, 1)  # past start-up: TPE builds (or reuses) the posterior
    assert len(_tpe._posteriors[first.domain]) == 1
