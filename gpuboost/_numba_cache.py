"""Where numba caches gpuboost's compiled kernels, when it cannot cache them where it would.

numba keeps a ``cache=True`` kernel's machine code next to its source (``__pycache__``) or, where
that folder is not writable (a read-only install), in the user's cache folder
(``~/.cache/numba``). Where neither is writable (a container user without a home, say), numba
refuses to define the kernel at all ("cannot cache function ...: no locator available"), so
that importing the compiled backend failed and nothing could be fitted or predicted.
``ensure_cache`` is called by the kernels' modules before their first ``@njit(cache=True)``:
in that case it points numba at a folder of the temporary directory, with a warning that says
how to choose one (``NUMBA_CACHE_DIR``).

``lock_cache_files`` makes the kernels' cache safe for processes that compile at once (see its
note): each kernels module calls it after its last kernel.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import tempfile
import time
import warnings

try:
    import fcntl
except ImportError:  # (Windows: numba's own behaviour, unlocked)
    fcntl = None

#: The lock file in a cache folder (shared by every kernel cached there)
LOCK_NAME = "gpuboost-cache.lock"


def _writable_private_folder(path: str) -> bool:
    """Whether path is (or could be made) a folder of this user that no other user can write:
    numba loads its cache files with pickle, so a folder another user controls is not used."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return (stat.S_ISDIR(info.st_mode) and owned and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            and os.access(path, os.W_OK))


def ensure_cache(source_file: str) -> None:
    """Make numba able to cache the kernels of ``source_file`` (see the module's note)."""
    from numba.core import config

    if config.CACHE_DIR:  # NUMBA_CACHE_DIR: the user's choice
        return
    try:
        from numba.core import caching

        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (_CacheImpl: an earlier numba's name)

        def probe():
            pass

        if any(locator.from_function(probe, source_file) is not None for locator in impl._locator_classes):
            return
    except Exception:  # noqa: BLE001 - another numba version: leave the choice to numba
        return
    user = os.getuid() if hasattr(os, "getuid") else "user"
    path = os.path.join(tempfile.gettempdir(), f"gpuboost-numba-cache-{user}")
    if not _writable_private_folder(path):
        try:
            path = tempfile.mkdtemp(prefix="gpuboost-numba-cache-")  # this process's own: compiled again next time
        except OSError:
            return  # (numba's own error follows)
    os.environ["NUMBA_CACHE_DIR"] = path  # (numba reloads its configuration from the environment)
    config.CACHE_DIR = path
    warnings.warn(
        f"numba cannot cache gpuboost's compiled kernels next to {os.path.dirname(source_file)} or in this user's "
        f"cache folder (neither is writable): they are cached in {path}. Set NUMBA_CACHE_DIR to a writable folder "
        "to choose where (a machine's first fit compiles them, 2 to 3 minutes).", RuntimeWarning, stacklevel=2)


#: How long a save or a load waits for another process's hold of the lock (a save holds it for
#: the time of writing one kernel's files, well under a second) before it gives up: a save is
#: then skipped and a load is a miss (the kernel is compiled), rather than waiting on a process
#: that was stopped while it held the lock
LOCK_WAIT_SECONDS = 60.0
LOCKED, UNLOCKED, BUSY = "locked", "unlocked", "busy"


@contextlib.contextmanager
def _cache_lock(folder: str, exclusive: bool):
    """An advisory lock on the cache folder (flock of LOCK_NAME in it), exclusive or shared,
    held for the block. Yields LOCKED; UNLOCKED where no lock can be had (no fcntl, a folder
    where the lock file cannot be made, a file system without flock): numba's own behaviour
    then; BUSY where another process held it for LOCK_WAIT_SECONDS."""
    handle = None
    if fcntl is not None:
        try:
            handle = open(os.path.join(folder, LOCK_NAME), "a+b")
        except OSError:
            handle = None
    state = UNLOCKED
    if handle is not None:
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        give_up = time.monotonic() + LOCK_WAIT_SECONDS
        delay = 0.001
        while True:
            try:
                fcntl.flock(handle.fileno(), mode)
                state = LOCKED
                break
            except BlockingIOError:  # another process holds it
                if time.monotonic() >= give_up:
                    state = BUSY
                    break
                time.sleep(delay)
                delay = min(2 * delay, 0.05)
            except OSError:  # no flock here
                break
    try:
        yield state
    finally:
        if handle is not None:
            handle.close()  # (closing the file releases its lock)


@functools.cache
def _locked_class(base):
    """numba's IndexDataCacheFile (``base``) with its save and load under the cache folder's
    lock, and a save that writes the data file before the index that names it (one class per
    base, made once)."""

    class LockedIndexDataCacheFile(base):
        def save(self, key, data):
            with _cache_lock(self._cache_path, exclusive=True) as state:
                if state == BUSY:
                    return  # (not cached: compiled again by the next process)
                overloads = self._load_index()
                data_name = overloads.get(key)
                if data_name is None:  # the first number no entry of the current index uses
                    existing = set(overloads.values())
                    number = 1
                    while self._data_name(number) in existing:
                        number += 1
                    data_name = self._data_name(number)
                self._save_data(data_name, data)
                overloads[key] = data_name
                self._save_index(overloads)

        def load(self, key):
            with _cache_lock(self._cache_path, exclusive=False) as state:
                return None if state == BUSY else super().load(key)  # (None: a miss, compiled here)

    LockedIndexDataCacheFile.__qualname__ = LockedIndexDataCacheFile.__name__
    return LockedIndexDataCacheFile


def lock_cache_files(namespace: dict) -> int:
    """Give every cached numba kernel in ``namespace`` (a module's globals) a cache file whose
    saves and loads hold the cache folder's lock. Returns how many it changed.

    numba (0.68, numba/numba#10128) saves a kernel's entry by reading the cache index, taking
    the first data-file number the index does not use, writing the index, then the data file,
    with no lock. Two processes that compile two specialisations of one kernel at once (a fit
    with 8-bit codes and one with more than 255 bins, in a grid search's worker processes, say)
    can both take number 1: the index then names for one specialisation the other's machine
    code, and a later process loads code compiled for other argument types (a crash, or wrong
    results). A process can also read an index entry before its data file is written, and load
    a stale file of an earlier source. Under the lock a save reads the index, writes the data
    file, then the index, and a load reads both, so that neither can happen. Where numba's
    cache is not the one this was written for, nothing changes."""
    changed = 0
    try:
        from numba.core import caching

        base = caching.IndexDataCacheFile
    except (ImportError, AttributeError):  # another numba: its own behaviour
        return changed
    locked = _locked_class(base)
    for value in list(namespace.values()):
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        if type(cache_file) is base:
            cache_file.__class__ = locked
            changed += 1
    return changed
