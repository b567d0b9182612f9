"""Fork mode's pages populated ahead (:mod:`._prefault`), with real forks: a child's touched
pages are recorded, the next child populates them before its work (its page faults during the
work drop), and nothing any process reads changes."""

import mmap
import os
import resource
import sys

import pytest

from snakemake_executor_plugin_sticky import _prefault
from snakemake_executor_plugin_sticky._prefault import PAGE, PageLog, touched

PAGES = 512


def _supported() -> bool:
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    madvise = _prefault._madvise()
    if madvise is None:
        return False
    probe = mmap.mmap(-1, PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    import ctypes

    address = ctypes.addressof(ctypes.c_char.from_buffer(probe))
    supported = madvise(address, PAGE, _prefault.MADV_POPULATE_WRITE) == 0
    del address
    return supported


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not _supported(), reason="needs Linux 5.14+ (MADV_POPULATE_*)"),
]


def _in_child(fn) -> bytes:  # type: ignore[no-untyped-def]
    """Run ``fn`` in a forked child; what it returns (bytes) comes back."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, fn())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return data


def _buffer() -> tuple[bytearray, int]:
    buf = bytearray(os.urandom(PAGES * PAGE))  # present in this (the template) process
    import ctypes

    return buf, ctypes.addressof(ctypes.c_char.from_buffer(buf))


def _faults_writing(buf: bytearray) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(0, len(buf), PAGE):
        buf[i] ^= 0xFF
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_a_child_records_the_pages_it_wrote() -> None:
    buf, address = _buffer()

    def child() -> bytes:
        _faults_writing(buf)
        ranges = touched()
        end = address + len(buf)
        written = 0
        for start, count in ranges:
            stop = start + (count & ~_prefault._WRITE) * PAGE
            if count & _prefault._WRITE and start < end and stop > address:
                written += min(stop, end) - max(start, address)
        return str(written // PAGE).encode()

    # Every page of the buffer it wrote is in a write range (the buffer may not start on a page).
    assert int(_in_child(child)) >= PAGES - 1
    # In the template process nothing was written: pages it shares are not "touched".
    assert len(buf) == PAGES * PAGE


def test_the_next_child_populates_them_ahead_and_faults_less() -> None:
    buf, _ = _buffer()
    expected = bytes(buf)
    log = PageLog()

    def recorder() -> bytes:
        _faults_writing(buf)
        log.record()
        return b""

    _in_child(recorder)
    assert log.stored(), "the recording child's ranges are visible to the template process"

    def populated() -> bytes:
        done = log.populate(lambda: False)
        same = bytes(buf) == expected  # populating changed nothing the process reads
        return f"{done} {_faults_writing(buf)} {same}".encode()

    def plain() -> bytes:
        return str(_faults_writing(buf)).encode()

    done, faults, same = _in_child(populated).split()
    assert same == b"True"
    assert int(done) >= PAGES - 1
    plain_faults = int(_in_child(plain))
    assert plain_faults >= PAGES - 1  # one copy-on-write fault per page written
    assert int(faults) < plain_faults // 4
    assert bytes(buf) == expected  # the children's writes never reached the template


def test_populate_stops_when_the_script_arrives_and_clear_forgets() -> None:
    buf, _ = _buffer()
    log = PageLog()
    _in_child(lambda: (_faults_writing(buf), log.record(), b"")[2])
    assert _in_child(lambda: str(log.populate(lambda: True)).encode()) == b"0"
    log.clear()
    assert log.stored() == []


def test_a_write_under_way_is_not_read() -> None:
    log = PageLog()
    buf, _ = _buffer()
    _in_child(lambda: (_faults_writing(buf), log.record(), b"")[2])
    sequence, n = _prefault._HEADER.unpack_from(log.region, 0)
    assert n and sequence % 2 == 0
    _prefault._HEADER.pack_into(log.region, 0, sequence + 1, n)  # a child is writing
    assert log.stored() == []
    log.record()  # another writer backs off too
    assert _prefault._HEADER.unpack_from(log.region, 0) == (sequence + 1, n)


def test_shared_mappings_are_never_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import ctypes

    path = tmp_path / "mapped"
    path.write_bytes(b"x" * PAGE * 4)
    with open(path, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 0)  # MAP_SHARED: a write would reach the file
        start = ctypes.addressof(ctypes.c_char.from_buffer(shared))

        def child() -> bytes:
            shared[0:1] = b"y"  # present and written in this child
            inside = [s for s, _ in touched() if start <= s < start + 4 * PAGE]
            return repr(inside).encode()

        assert _in_child(child) == b"[]"
        shared.close()
    assert path.read_bytes()[:1] == b"y"  # the child's write did reach the file (shared)


def test_a_fork_mode_worker_populates_what_its_invocations_write(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Wired into fork mode: a template holding a buffer, scripts that write every page of it
    and record their own page faults; once a child has recorded its pages, the next ones
    (forked ahead, populated while they wait) fault far less. The outputs are what a fresh
    process gives: each child starts from the template's bytes."""
    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_fresh_process,
    )

    faults = in_fresh_process(populates_what_its_invocations_write, folder=str(tmp_path))
    assert len(faults) == 6 and faults[0] >= PAGES - 1, faults  # the first child copies all


def populates_what_its_invocations_write(folder: str) -> list[int]:
    import importlib.util
    import time
    from pathlib import Path

    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_process_worker,
        invoke_forked,
    )

    tmp_path = Path(folder)
    templates = tmp_path / "sticky_templates.py"
    templates.write_text(
        "from stickyinvoc import template\n"
        "@template('buf')\n"
        f"def buf():\n    return bytearray(b'a' * {PAGES * PAGE})\n"
    )
    source = (
        "import resource, stickyinvoc\n"
        "buf = stickyinvoc.state(snakemake)\n"
        "first = bytes(buf[:4])\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        f"for i in range(0, len(buf), {PAGE}):\n    buf[i] = 98\n"
        "faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before\n"
        "open(snakemake.output[0], 'w').write(f'{first!r} {faults}')\n"
    )
    worker = in_process_worker()
    results = []
    try:
        for i in range(6):
            out = tmp_path / f"out{i}"
            assert invoke_forked(worker, i, "buf", templates, source, out).ok
            worker.isolation.idle(True)
            time.sleep(0.3)  # the recording child is done, the next spare has populated
            first, faults = out.read_text().split()
            results.append((first, int(faults)))
    finally:
        worker.isolation.close()
    assert all(first == "b'aaaa'" for first, _ in results), results  # never a child's write
    # What a forked job imports that the template does not is reported (the executor says so
    # once per template: every forked job imports it again).
    candidates = ("tabulate", "wcwidth", "colorama", "mpmath", "toolz", "smart_open")
    library = next(
        (m for m in candidates if m not in sys.modules and importlib.util.find_spec(m)), None
    )
    if library is None:
        pytest.skip("no installed library left unimported by the test process")
    try:
        imports = f"import json, {library}\n"
        done = invoke_forked(worker, 9, "buf", templates, imports, tmp_path / "imports")
    finally:
        worker.isolation.close()
    assert done.ok and library in done.imported, done.imported
    assert "json" not in done.imported  # the standard library: not reported
    assert results[0][1] >= PAGES - 1, results  # the first child copies every page it writes
    # Most later children (a spare that finds the last child still listing its pages after
    # 200 ms goes without: a loaded machine's first runs) fault under a quarter as often.
    assert sum(f < results[0][1] // 4 for _, f in results[1:]) >= 3, results
    return [f for _, f in results]


def test_a_failed_populate_leaves_the_scripts_ctypes_errno_alone() -> None:
    """The library matrix's ctypes case: ``ctypes.set_errno`` returns the previous private
    errno, 0 in a fresh process; a populate call that fails (a range no longer mapped) must
    not leave ENOMEM there."""
    import ctypes

    log = PageLog()
    _prefault._HEADER.pack_into(log.region, 0, 2, 1)
    _prefault._RANGE.pack_into(log.region, _prefault._HEADER.size, PAGE, 4)  # never mapped

    def child() -> bytes:
        ctypes.set_errno(0)
        log.populate(lambda: False)
        return str(ctypes.get_errno()).encode()

    assert _in_child(child) == b"0"


def _thp_enabled() -> bool:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


def test_a_long_running_fork_worker_puts_its_template_in_huge_pages(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """After ``COLLAPSE_AFTER`` children (3 here) the template process's anonymous memory is
    collapsed into huge pages before the next fork; every child still starts from the
    template's bytes and its writes stay its own."""
    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_fresh_process,
    )

    seen, collapsed, huge_kib = in_fresh_process(
        collapses_after_some_children, folder=str(tmp_path)
    )
    assert seen == ["b'aaaa' 64"] * 6, seen  # each child: the template's bytes, then its own
    assert collapsed
    if _thp_enabled():
        assert huge_kib >= 32 * 1024, huge_kib  # the 64 MiB buffer, in 2 MiB pages


def collapses_after_some_children(folder: str) -> tuple[list[str], bool, int]:
    from pathlib import Path

    from snakemake_executor_plugin_sticky import _isolation
    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_process_worker,
        invoke_forked,
    )

    _isolation.COLLAPSE_AFTER = 3
    tmp_path = Path(folder)
    templates = tmp_path / "sticky_templates.py"
    templates.write_text(
        "from stickyinvoc import template\n"
        "@template('buf')\n"
        "def buf():\n    return bytearray(b'a' * (64 << 20))\n"
    )
    source = (
        "import stickyinvoc\n"
        "buf = stickyinvoc.state(snakemake)\n"
        "first = bytes(buf[:4])\n"
        "buf[:4] = b'bbbb'\n"
        "open(snakemake.output[0], 'w').write(f'{first!r} {len(buf) >> 20}')\n"
    )
    worker = in_process_worker()
    seen = []
    try:
        for i in range(6):
            out = tmp_path / f"out{i}"
            assert invoke_forked(worker, i, "buf", templates, source, out).ok
            worker.isolation.idle(True)
            seen.append(out.read_text())
        collapsed = worker.isolation.collapsed
    finally:
        worker.isolation.close()
    with open("/proc/self/smaps_rollup") as f:
        huge = [int(line.split()[1]) for line in f if line.startswith("AnonHugePages:")]
    return seen, collapsed, huge[0] if huge else 0
