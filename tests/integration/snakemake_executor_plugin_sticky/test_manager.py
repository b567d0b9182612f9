"""The manager/worker link against real sockets and processes (no Snakemake run)."""

import logging
import multiprocessing
import secrets
import threading
from multiprocessing.connection import Client
from pathlib import Path

import pytest

from snakemake_executor_plugin_sticky._metrics import MetricsLog
from snakemake_executor_plugin_sticky.manager import Manager

pytestmark = pytest.mark.integration


@pytest.fixture
def manager(tmp_path: Path):
    done: list[tuple[int, bool, object]] = []
    m = Manager(
        max_workers=1,
        run_dir=tmp_path,
        workdir=tmp_path,
        on_done=lambda i, ok, err, d: done.append((i, ok, err)),
        on_requeue=lambda i: None,
        metrics=MetricsLog(tmp_path / "metrics.jsonl"),
    )
    yield m
    m.cancel()


def test_listens_on_loopback_by_default(manager):
    assert manager.address[0] == "127.0.0.1"
    assert manager.connect_address.startswith("127.0.0.1:")


def test_connection_without_the_secret_is_refused_and_logged(manager, caplog, poll):
    """A client with the wrong key fails the HMAC challenge: refused, logged, recorded."""
    caplog.set_level(logging.WARNING, logger="snakemake.sticky")
    with pytest.raises(multiprocessing.AuthenticationError):
        Client(tuple(manager.address), authkey=secrets.token_bytes(32))
    poll(lambda: manager.metrics.records("connection_refused"), 10, "the refusal record")
    assert any("refused a connection" in r.getMessage() for r in caplog.records)
    assert not manager.workers


def test_silent_connection_is_dropped_after_the_handshake_timeout(manager, monkeypatch, poll):
    """A peer that connects and says nothing cannot hold a manager thread forever."""
    import socket

    import snakemake_executor_plugin_sticky.manager as manager_module

    monkeypatch.setattr(manager_module, "HANDSHAKE_TIMEOUT", 0.5)
    sock = socket.create_connection(tuple(manager.address))
    sock.settimeout(10)
    closed = threading.Event()

    def read_until_closed() -> None:
        try:
            while sock.recv(4096):
                pass
        except OSError:
            pass
        closed.set()

    threading.Thread(target=read_until_closed, daemon=True).start()
    assert closed.wait(10), "the manager kept a silent connection open"
    sock.close()


def test_unknown_worker_id_is_refused(manager):
    """Even with the secret, a worker the manager did not start gets no work."""
    conn = Client(tuple(manager.address), authkey=manager.secret)
    from snakemake_executor_plugin_sticky._protocol import Hello, Refused

    conn.send(Hello("w99", 1))
    reply = conn.recv()
    assert isinstance(reply, Refused) and "w99" in reply.reason
    conn.close()
