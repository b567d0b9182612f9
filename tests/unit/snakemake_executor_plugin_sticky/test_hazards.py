"""What makes a template process unsafe to fork, and the helper threads stopped instead."""

import io
import sys
import threading
import types

import pytest

from snakemake_executor_plugin_sticky._hazards import fork_hazards, stop_restartable_threads
from snakemake_executor_plugin_sticky._isolation import job_threads
from snakemake_executor_plugin_sticky._seeds import SeedWatch


def _monitors() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if type(t).__name__ == "TMonitor"]


def test_a_progress_bars_monitor_is_stopped_and_the_next_bar_starts_its_own():
    tqdm = pytest.importorskip("tqdm")
    others = set(threading.enumerate())  # other tests' threads: not this test's hazards

    class Bar(tqdm.tqdm):  # a class of its own: its monitor is its own
        monitor_interval = 10
        monitor = None

    for _ in Bar(range(3), file=io.StringIO()):  # as transformers' "Loading weights" bar
        pass
    assert any(t.tqdm_cls is Bar for t in _monitors())
    assert any("threads running (tqdm_monitor" in r for r in fork_hazards(others))

    assert "tqdm_monitor" in stop_restartable_threads()
    assert not [t for t in _monitors() if t.tqdm_cls is Bar] and Bar.monitor is None
    assert not any("tqdm_monitor" in r for r in fork_hazards(others))

    bar = Bar(range(3), file=io.StringIO())  # tqdm starts one again, as it does when it has none
    try:
        assert Bar.monitor is not None and Bar.monitor.is_alive()
    finally:
        bar.close()
        stop_restartable_threads()


def test_other_threads_are_left_running_and_named():
    others = set(threading.enumerate())
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, name="prefetcher", daemon=True)
    thread.start()
    try:
        assert "prefetcher" not in stop_restartable_threads()
        assert thread.is_alive()
        assert any("threads running (prefetcher" in r for r in fork_hazards(others))
    finally:
        stop.set()
        thread.join()


class _FakeTorch(types.ModuleType):
    def __init__(self) -> None:
        super().__init__("torch")
        self.threads = 1

    def get_num_threads(self) -> int:
        return self.threads

    def set_num_threads(self, n: int) -> None:
        self.threads = n


def test_a_templates_torch_set_num_threads_is_recorded_while_it_builds(monkeypatch):
    torch = _FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    with SeedWatch() as watch:
        torch.set_num_threads(1)  # as the docs' example template does
    assert watch.torch_threads == 1
    assert not hasattr(torch.set_num_threads, "__wrapped__")  # put back after the build
    with SeedWatch() as quiet:
        pass
    assert quiet.torch_threads is None


def test_a_job_keeps_the_templates_torch_size_or_gets_its_threads(monkeypatch):
    torch = _FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delitem(sys.modules, "numpy", raising=False)  # this process's BLAS: left alone
    job = types.SimpleNamespace(threads=2)
    job_threads(job, torch_too=False)  # the template sized it: a fresh job keeps 1
    assert torch.threads == 1
    job_threads(job)  # the worker's environment sized it: a fresh job's OMP_NUM_THREADS=2
    assert torch.threads == 2
