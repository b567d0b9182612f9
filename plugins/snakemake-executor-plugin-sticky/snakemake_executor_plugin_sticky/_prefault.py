"""Fork mode's page faults, taken off the invocation's path.

A child forked from a warm template pays, during its first work, for every page of the
template it touches: a write copies the page (copy-on-write), and a read of a shared library's
or a mapped file's page maps it (Linux does not copy those page tables at fork). For a model
template that is most of what a forked child's first inference costs over the template's own
(MiniLM on a CPU: about 2,300 faults, +11 ms on a 15 ms inference). The pages an invocation
touches are nearly the same from one invocation to the next, so:

- a child, once it has reported its outcome (off the path: the job is done), reads which
  pages it touched from ``/proc/self/pagemap`` (pages it holds alone in private writable
  mappings; present pages of file mappings) and stores them as ranges in a small region shared
  with the template process (:class:`PageLog`);
- the next spare child, while it waits for its script, touches the pages of those ranges that
  it still shares with the template (``madvise`` ``MADV_POPULATE_WRITE`` / ``_READ``, Linux
  5.14+), and stops as soon as its script arrives.

And once a template has forked many children (``_isolation.COLLAPSE_AFTER``),
:func:`collapse_anonymous` puts the
template's private anonymous memory (the heap, arrays, the interpreter's arenas) into huge
pages (``MADV_HUGEPAGE`` + ``MADV_COLLAPSE``, Linux 6.1+): fork copies one entry per 2 MiB
instead of 512, and each child's exit frees as few, while a child's write still copies one
4 KiB page (Linux splits a shared huge page on write). Measured in a worker holding MiniLM:
the fork's kernel time 8 to 4 ms, the child's 23 to 20 ms, resident memory unchanged.

Nothing here changes what any process reads or writes: only when the kernel copies and maps
pages. Where the calls are missing (not Linux, an older kernel, no ``/proc``) it does nothing.
"""

import ctypes
import mmap
import re
import struct
import time
from collections.abc import Callable, Iterator
from typing import Optional

PAGE = mmap.PAGESIZE
MADV_HUGEPAGE = 14
MADV_POPULATE_READ = 22
MADV_POPULATE_WRITE = 23
MADV_COLLAPSE = 25
HUGE = 1 << 21
"""The size of an x86-64/arm64 (4 KiB base pages) transparent huge page."""
_WRITE = 1 << 63
"""Set in a stored range's page count: populate for writing (a private writable mapping)."""
_HEADER = struct.Struct("<QQ")  # sequence (odd while a child writes), number of ranges
_RANGE = struct.Struct("<QQ")  # start address, page count (| _WRITE)
_SIZE = 1 << 18
MAX_RANGES = (_SIZE - _HEADER.size) // _RANGE.size
MAX_MAPPING = 1 << 32
"""Mappings larger than this are not scanned (their page map alone would be megabytes)."""
MAX_PAGES = 1 << 16
"""At most this many pages are populated ahead (256 MiB of 4 KiB pages)."""

# pagemap entry, top byte: bit 7 = present (63), bit 0 = mapped by this process only (56).
_PRESENT_ALONE = bytes(1 if b & 0x81 == 0x81 else 0 for b in range(256))
_PRESENT = bytes(1 if b & 0x80 else 0 for b in range(256))
_PRESENT_SHARED = bytes(1 if b & 0x81 == 0x80 else 0 for b in range(256))
_RUNS = re.compile(b"\x01+")


def _madvise() -> Optional[Callable[[int, int, int], int]]:
    try:
        fn = ctypes.CDLL(None).madvise  # not use_errno: ctypes.get_errno() stays the script's
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


def _maps() -> Iterator[tuple[int, int, str, str]]:
    """(start, end, permissions, path: "" when anonymous) of each of this process's mappings."""
    with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            if len(fields) < 5:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            yield start, end, fields[1], fields[5].strip() if len(fields) > 5 else ""


def _mappings() -> Iterator[tuple[int, int, bool]]:
    """(start, end, anonymous and writable) of the mappings worth populating: private
    anonymous writable ones (the heap, arrays) for writing, private file mappings (shared
    libraries, mapped model files) for reading only: a file mapping's page copied ahead would
    no longer show what a job later writes to the file (``mmap`` ``ACCESS_COPY``, numpy's
    ``memmap(mode="c")``), where a fresh process reads the file as it is."""
    for start, end, perms, path in _maps():
        if perms[0] != "r" or perms[3] != "p" or path.startswith(("/dev/", "[v")):
            continue  # shared (a write would reach the file), device memory, vdso/vvar
        if end - start > MAX_MAPPING:
            continue
        if path.startswith("/"):
            yield start, end, False
        elif perms[1] == "w":
            yield start, end, True


MIN_COLLAPSED = 8 * HUGE
"""The smallest anonymous mapping :func:`collapse_anonymous` collapses (the heap: any size):
smaller ones are mostly threads' stacks, which huge pages would only make larger."""


def collapse_anonymous() -> int:
    """Put this process's private anonymous writable mappings of at least
    :data:`MIN_COLLAPSED` (and the heap) into transparent huge pages, each mapping's whole
    2 MiB-aligned span; returns the bytes advised. Only the kernel's page tables change; where
    it refuses (THP disabled, no ``MADV_COLLAPSE``) the pages stay as they are."""
    madvise = _madvise()
    if madvise is None or PAGE != 4096:
        return 0
    try:
        mappings = list(_maps())
    except OSError:
        return 0
    done = 0
    for start, end, perms, path in mappings:
        if perms != "rw-p" or path not in ("", "[heap]"):
            continue  # a file's private copy, the stack, vdso: left alone
        first, last = -(-start // HUGE) * HUGE, end // HUGE * HUGE
        if last - first < (HUGE if path else MIN_COLLAPSED):
            continue
        if madvise(first, last - first, MADV_HUGEPAGE) != 0:
            continue
        madvise(first, last - first, MADV_COLLAPSE)  # as much as it can; the rest on fault
        done += last - first
    return done


def _runs(pagemap: "object", start: int, pages: int, table: bytes) -> Iterator[tuple[int, int]]:
    """(first page address, page count) of the runs of pages whose entries ``table`` marks."""
    pagemap.seek(start // PAGE * 8)  # type: ignore[attr-defined]
    data = pagemap.read(pages * 8)  # type: ignore[attr-defined]
    marks = data[7::8].translate(table)
    for m in _RUNS.finditer(marks):
        yield start + m.start() * PAGE, m.end() - m.start()


def touched() -> list[tuple[int, int]]:
    """The pages this process touched since it was forked, as (start, page count | _WRITE)
    ranges: those it holds alone in private writable mappings (copied, or new), and present
    pages of read-only file mappings."""
    out: list[tuple[int, int]] = []
    with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
        for start, end, writable in _mappings():
            table = _PRESENT_ALONE if writable else _PRESENT
            flag = _WRITE if writable else 0
            for first, count in _runs(pagemap, start, (end - start) // PAGE, table):
                out.append((first, count | flag))
                if len(out) >= MAX_RANGES:
                    return out
    return out


class PageLog:
    """The ranges the last recording child touched, in memory shared by the template process
    and every child forked from it (a sequence counter tells a reader a write was under way)."""

    def __init__(self) -> None:
        self.region = mmap.mmap(-1, _SIZE)  # anonymous and shared: children write, spares read
        self.madvise = _madvise()

    def clear(self) -> None:
        """A template was built: the pages to populate are no longer the same."""
        sequence, _ = _HEADER.unpack_from(self.region, 0)
        _HEADER.pack_into(self.region, 0, sequence + 2 - sequence % 2, 0)

    def record(self) -> None:
        """In a child, after its outcome went out: store the pages it touched."""
        try:
            ranges = touched()
        except Exception:  # noqa: BLE001 - the job is done; the script may have broken open()
            return
        # Two recording children of one worker can overlap (one still listing while the next
        # job, a short one, ends): mixed ranges only make a spare populate other pages, which
        # changes no memory contents, and at most MAX_PAGES of them.
        sequence, _ = _HEADER.unpack_from(self.region, 0)
        if sequence % 2:
            return  # another child is writing
        _HEADER.pack_into(self.region, 0, sequence + 1, 0)
        for i, (start, count) in enumerate(ranges):
            _RANGE.pack_into(self.region, _HEADER.size + i * _RANGE.size, start, count)
        _HEADER.pack_into(self.region, 0, sequence + 2, len(ranges))

    def writing(self) -> bool:
        """A child is storing its ranges right now."""
        return bool(_HEADER.unpack_from(self.region, 0)[0] % 2)

    def stored(self) -> list[tuple[int, int]]:
        """The stored ranges, or none while a child is writing them."""
        sequence, n = _HEADER.unpack_from(self.region, 0)
        if sequence % 2 or not n:
            return []
        ranges = [
            _RANGE.unpack_from(self.region, _HEADER.size + i * _RANGE.size)
            for i in range(min(n, MAX_RANGES))
        ]
        return ranges if _HEADER.unpack_from(self.region, 0)[0] == sequence else []

    def populate(self, interrupted: Callable[[], bool]) -> int:
        """In a spare child: touch the stored pages it still shares with the template; stop
        when ``interrupted()`` (its script arrived). Returns the pages populated."""
        madvise = self.madvise
        if madvise is None:
            return 0
        done = 0
        try:
            ranges = self.stored()
            waited = 0.0
            while not ranges and self.writing() and waited < 0.2 and not interrupted():
                time.sleep(0.005)  # the last child is still listing its pages: it is short
                waited += 0.005
                ranges = self.stored()
            with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
                for i, (start, count) in enumerate(ranges):
                    if done >= MAX_PAGES or (i % 32 == 0 and interrupted()):
                        break
                    pages = count & ~_WRITE
                    if not count & _WRITE:
                        if madvise(start, pages * PAGE, MADV_POPULATE_READ) == 0:
                            done += pages
                        continue
                    for first, n in _runs(pagemap, start, pages, _PRESENT_SHARED):
                        if madvise(first, n * PAGE, MADV_POPULATE_WRITE) == 0:
                            done += n
        except Exception:  # noqa: BLE001 - only a speed-up: the child must go on to its script
            pass
        return done
