"""Where numba caches gpuboost's compiled kernels, when it cannot cache them where it would.

numba keeps a ``cache=True`` kernel's machine code next to its source (``__pycache__``) or, where
that folder is not writable (a read-only install), in the user's cache folder
(``~/.cache/numba``). Where neither is writable (a container user without a home, say), numba
refuses to define the kernel at all ("cannot cache function ...: no locator available"), so
that importing the compiled backend failed and nothing could be fitted or predicted.
``ensure_cache`` is called by the kernels' modules before their first ``@njit(cache=True)``:
in that case it points numba at a folder of the temporary directory, with a warning that says
how to choose one (``NUMBA_CACHE_DIR``).
"""

from __future__ import annotations

import os
import stat
import tempfile
import warnings


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
