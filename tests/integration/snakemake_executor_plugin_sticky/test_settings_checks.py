"""The listen address checked by a trial bind (integration: it binds a real socket)."""

import pytest

from snakemake_executor_plugin_sticky.settings import ExecutorSettings

pytestmark = pytest.mark.integration


def test_an_address_that_is_not_this_machines_is_refused_by_a_trial_bind():
    from snakemake_executor_plugin_sticky.executor import _bind_problems

    # TEST-NET-1 (RFC 5737) is a valid address that no machine here has.
    (problem,) = _bind_problems(ExecutorSettings(listen_address="192.0.2.1"))
    assert problem.startswith("--sticky-listen-address 192.0.2.1: the manager cannot listen there")
    assert _bind_problems(ExecutorSettings()) == []
