"""The kernels' numba cache under processes that compile at once (gpuboost._numba_cache)."""

import threading
import time

import numba
import pytest
from numba.core import caching

from gpuboost import _numba_cache, _numba_binning, _treeshap
from gpuboost.backends import _numba_cpu


def _two_writers_at_once(cache_class, folder):
    """Two writers of one kernel's cache (as two processes), saving different specialisations
    (keys) at the same time, interleaved by events (each wait has a timeout, for the writer
    that a lock keeps out): the first reads the index, the second reads it and writes its
    index, the first saves, then the second writes its data file. Returns what a third reader
    loads for each key."""
    stamp = ("source stamp", 1)
    first, second, reader = (cache_class(str(folder), "kernel-10.py311", stamp) for _ in range(3))
    first_read, second_indexed, first_done = threading.Event(), threading.Event(), threading.Event()
    read_index, save_index, save_data = first._load_index, second._save_index, second._save_data

    def first_reads_then_waits():
        overloads = read_index()
        first_read.set()
        second_indexed.wait(0.5)
        return overloads

    def second_saves_index(overloads):
        save_index(overloads)
        second_indexed.set()

    def second_saves_data(name, data):
        first_done.wait(1.0)
        save_data(name, data)

    def first_saves():
        first.save(("uint8 codes", "cpu"), "code for uint8")
        first_done.set()

    first._load_index, second._save_index, second._save_data = first_reads_then_waits, second_saves_index, \
        second_saves_data
    thread = threading.Thread(target=first_saves)
    thread.start()
    assert first_read.wait(5.0)
    second.save(("uint16 codes", "cpu"), "code for uint16")
    thread.join()
    return reader.load(("uint8 codes", "cpu")), reader.load(("uint16 codes", "cpu"))


@pytest.mark.skipif(_numba_cache.fcntl is None, reason="no fcntl (Windows): numba's own, unlocked cache")
def test_saves_at_once_keep_each_specialisation_its_own_code(tmp_path):
    locked = _numba_cache._locked_class(caching.IndexDataCacheFile)
    assert _two_writers_at_once(locked, tmp_path) == ("code for uint8", "code for uint16")


class _Numba068CacheFile(caching.IndexDataCacheFile):
    """numba 0.68's save as it is written there (numba/numba#10128), whatever the installed
    numba's: read the index, take the first data-file number it does not use, write the index,
    then the data file, with no lock."""

    def save(self, key, data):
        overloads = self._load_index()
        data_name = overloads.get(key)
        if data_name is None:
            existing = set(overloads.values())
            number = 1
            while self._data_name(number) in existing:
                number += 1
            data_name = overloads[key] = self._data_name(number)
            self._save_index(overloads)
        self._save_data(data_name, data)


def test_the_unlocked_save_gives_one_specialisation_the_others_code_when_saves_overlap(tmp_path):
    """Why the lock, and that the interleaving above finds what it is for: numba 0.68's save
    names data file 1 for both keys; the index keeps the first's entry, the file holds the
    second's code."""
    assert _two_writers_at_once(_Numba068CacheFile, tmp_path) == ("code for uint16", None)


@pytest.mark.skipif(_numba_cache.fcntl is None, reason="no fcntl (Windows): numba's own, unlocked cache")
def test_a_load_waits_for_a_save_in_progress(tmp_path):
    """A save holds the lock from reading the index to writing it, and a load takes it too: a
    load never sees an index entry whose data file is not written yet."""
    locked = _numba_cache._locked_class(caching.IndexDataCacheFile)
    writer, reader = (locked(str(tmp_path), "kernel-10.py311", ("stamp", 1)) for _ in range(2))
    save_data, writing = writer._save_data, threading.Event()

    def slow_save_data(name, data):
        writing.set()  # (the writer holds the lock now)
        time.sleep(0.3)
        save_data(name, data)

    writer._save_data = slow_save_data
    thread = threading.Thread(target=writer.save, args=(("key", "cpu"), "machine code"))
    thread.start()
    assert writing.wait(5.0)
    assert reader.load(("key", "cpu")) == "machine code"
    thread.join()


def test_every_cached_kernel_saves_and_loads_under_the_lock():
    modules = (_numba_cpu, _numba_binning, _treeshap)
    kernels = [value for module in modules for value in vars(module).values()
               if isinstance(value, numba.core.registry.CPUDispatcher)]
    assert len(kernels) > 100
    cached = [k for k in kernels if hasattr(k._cache, "_cache_file")]
    assert len(cached) == len(kernels)  # (every kernel is cache=True)
    assert all(type(k._cache._cache_file).__name__ == "LockedIndexDataCacheFile" for k in cached)


@pytest.mark.skipif(_numba_cache.fcntl is None, reason="no fcntl (Windows): numba's own, unlocked cache")
def test_a_lock_held_too_long_skips_the_save_and_misses_the_load(tmp_path, monkeypatch):
    """A process stopped while it holds the lock does not hang the others: after
    LOCK_WAIT_SECONDS a save is skipped and a load is a miss (the kernel is compiled)."""
    locked = _numba_cache._locked_class(caching.IndexDataCacheFile)
    cache_file = locked(str(tmp_path), "kernel-10.py311", ("stamp", 1))
    cache_file.save(("key", "cpu"), "machine code")
    monkeypatch.setattr(_numba_cache, "LOCK_WAIT_SECONDS", 0.2)
    with open(tmp_path / _numba_cache.LOCK_NAME, "a+b") as holder:
        _numba_cache.fcntl.flock(holder.fileno(), _numba_cache.fcntl.LOCK_EX)
        began = time.monotonic()
        assert cache_file.load(("key", "cpu")) is None
        cache_file.save(("other key", "cpu"), "other code")
        assert time.monotonic() - began < 2.0
    assert cache_file.load(("key", "cpu")) == "machine code"
    assert cache_file.load(("other key", "cpu")) is None
    assert sorted(p.name for p in tmp_path.glob("*.nbc")) == ["kernel-10.py311.1.nbc"]


def test_a_folder_where_no_lock_file_can_be_made_is_used_unlocked(tmp_path):
    """Where the lock file cannot be made (here the folder does not exist; a read-only one
    alike), saves and loads go on as numba's own."""
    folder = tmp_path / "no such folder"
    with _numba_cache._cache_lock(str(folder), exclusive=True) as state:
        assert state == _numba_cache.UNLOCKED
    locked = _numba_cache._locked_class(caching.IndexDataCacheFile)
    assert locked(str(folder), "kernel-10.py311", ("stamp", 1)).load(("key", "cpu")) is None
