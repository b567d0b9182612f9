"""Handshakes have a total deadline and a bounded number run at once (real sockets, a real
manager; no Snakemake run)."""

import socket
import threading
import time
from multiprocessing.connection import Client
from pathlib import Path

import pytest

import snakemake_executor_plugin_sticky.manager as manager_module
from snakemake_executor_plugin_sticky._metrics import MetricsLog
from snakemake_executor_plugin_sticky.manager import Manager

pytestmark = pytest.mark.integration


def make_manager(tmp_path: Path) -> Manager:
    return Manager(
        max_workers=1,
        run_dir=tmp_path,
        workdir=tmp_path,
        on_done=lambda *a: None,
        on_requeue=lambda i: None,
        metrics=MetricsLog(tmp_path / "metrics.jsonl"),
    )


def watch_close(sock: socket.socket) -> threading.Event:
    """An event set when the manager closes ``sock`` (EOF or reset)."""
    closed = threading.Event()

    def read() -> None:
        try:
            while sock.recv(4096):
                pass
        except OSError:
            pass
        closed.set()

    threading.Thread(target=read, daemon=True).start()
    return closed


def test_a_trickling_peer_is_cut_off_at_the_total_deadline(tmp_path, monkeypatch):
    """One byte every 0.3 s never trips a per-read timeout of 1 s; the total deadline of 1 s
    cuts the connection off anyway."""
    monkeypatch.setattr(manager_module, "HANDSHAKE_TIMEOUT", 1.0)
    manager = make_manager(tmp_path)
    try:
        sock = socket.create_connection(tuple(manager.address))
        closed = watch_close(sock)
        started = time.monotonic()
        # A length header announcing a big answer, then its bytes, one at a time.
        trickle = b"\x00\x00\x01\x00" + b"x" * 64
        for byte in trickle:
            if closed.is_set():
                break
            try:
                sock.send(bytes([byte]))
            except OSError:
                break
            time.sleep(0.3)
            if time.monotonic() - started > 8:
                break
        assert closed.wait(1), "the manager kept a trickling handshake open"
        held = time.monotonic() - started
        assert held < 4, f"cut off after {held:.1f} s, not at the 1 s deadline"
        sock.close()
    finally:
        manager.cancel()


def test_pending_handshakes_are_bounded_and_real_workers_still_get_in(tmp_path, monkeypatch):
    """With room for 2 pending handshakes, 5 silent peers get 2 challenges; the rest wait in
    the backlog until the deadline frees a slot; an honest client then authenticates."""
    monkeypatch.setattr(manager_module, "MAX_PENDING_HANDSHAKES", 2)
    monkeypatch.setattr(manager_module, "HANDSHAKE_TIMEOUT", 4.0)
    manager = make_manager(tmp_path)
    try:
        socks = [socket.create_connection(tuple(manager.address)) for _ in range(5)]
        challenged = [threading.Event() for _ in socks]

        def wait_challenge(sock: socket.socket, event: threading.Event) -> None:
            sock.settimeout(30)
            try:
                if sock.recv(1):
                    event.set()
            except OSError:
                pass

        for sock, event in zip(socks, challenged, strict=True):
            threading.Thread(target=wait_challenge, args=(sock, event), daemon=True).start()
        started = time.monotonic()
        while sum(e.is_set() for e in challenged) < 2 and time.monotonic() - started < 3:
            time.sleep(0.05)
        time.sleep(0.5)  # a third would be challenged by now, were it accepted
        assert sum(e.is_set() for e in challenged) == 2  # still inside the 4 s deadline
        handshaking = [t for t in threading.enumerate() if t.name == "sticky-handshake"]
        assert len(handshaking) <= 2
        # The deadline cuts the first two off; the waiting ones are served in turn.
        deadline = time.monotonic() + 30
        while not all(e.is_set() for e in challenged) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(e.is_set() for e in challenged)
        for sock in socks:
            sock.close()
        conn = Client(tuple(manager.address), authkey=manager.secret)
        from snakemake_executor_plugin_sticky._protocol import Hello, Refused

        conn.send(Hello("w99", 1))
        assert isinstance(conn.recv(), Refused)  # authenticated, then refused: unknown id
        conn.close()
    finally:
        manager.cancel()
