"""Data that needs no download.

``make_poker_hands`` generates data distributed as UCI's "Poker Hand" set (one of the AOSO
paper's benchmarks): random deals of 5 distinct cards from a 52-card deck, 10 features
(suit 1-4 and rank 1-13 of each card, as in the UCI files: S1, C1, ..., S5, C5) and the
hand's rank as the label:

    0 nothing        1 one pair       2 two pairs      3 three of a kind   4 straight
    5 flush          6 full house     7 four of a kind 8 straight flush    9 royal flush

Straights follow the UCI description: five consecutive ranks, the ace counting low
(A-2-3-4-5) or high (10-J-Q-K-A); no wrap-around. A royal flush is the flush 10-J-Q-K-A.
"""

from __future__ import annotations

import numpy as np

__all__ = ["make_poker_hands", "poker_hand_rank", "POKER_HAND_NAMES", "load_data", "load_features"]

POKER_HAND_NAMES = (
    "nothing", "one pair", "two pairs", "three of a kind", "straight",
    "flush", "full house", "four of a kind", "straight flush", "royal flush",
)


def poker_hand_rank(X: np.ndarray) -> np.ndarray:
    """Label (0-9) of each hand in X, shape (n, 10): suit, rank of each of 5 cards."""
    X = np.asarray(X)
    suits = X[:, 0::2]
    ranks = np.sort(X[:, 1::2], axis=1)
    flush = np.all(suits == suits[:, :1], axis=1)
    # rank multiplicities, sorted descending: (4,1), (3,2), (3,1,1), (2,2,1), (2,1,1,1), (1,...)
    counts = np.zeros((X.shape[0], 14), dtype=np.int8)
    np.add.at(counts, (np.arange(X.shape[0])[:, None], ranks), 1)
    multiplicity = -np.sort(-counts, axis=1)
    first, second = multiplicity[:, 0], multiplicity[:, 1]
    distinct = first == 1
    consecutive = distinct & (ranks[:, 4] - ranks[:, 0] == 4)
    ace_high = distinct & np.all(ranks == np.array([1, 10, 11, 12, 13]), axis=1)
    straight = consecutive | ace_high

    label = np.zeros(X.shape[0], dtype=np.int64)
    label[first == 2] = 1
    label[(first == 2) & (second == 2)] = 2
    label[first == 3] = 3
    label[straight] = 4
    label[flush] = 5
    label[(first == 3) & (second == 2)] = 6
    label[first == 4] = 7
    label[straight & flush] = 8
    label[ace_high & flush] = 9
    return label


def make_poker_hands(
    n_samples: int = 25010, random_state=None, chunk_size: int = 200_000
) -> tuple[np.ndarray, np.ndarray]:
    """Random poker hands and their labels.

    Parameters
    ----------
    n_samples : int, default=25010
        Number of hands (UCI's training file has 25010).
    random_state : int, numpy Generator or None
    chunk_size : int, default=200_000
        Hands drawn per step; bounds the draw's temporary memory (about 830 bytes a hand of a
        step: 52 random keys and their argpartition's indices, 8 bytes each), so that ten
        million hands can be made on a small machine.

    Returns
    -------
    X : ndarray of shape (n_samples, 10), uint8
        Suit (1-4) and rank (1-13) of each of the 5 cards.
    y : ndarray of shape (n_samples,), int64
        The hand's rank 0-9 (see the module docstring).
    """
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
    rng = np.random.default_rng(random_state)
    X = np.empty((n_samples, 10), dtype=np.uint8)
    for start in range(0, n_samples, chunk_size):
        n = min(chunk_size, n_samples - start)
        # 5 distinct cards out of 52: the positions of the 5 smallest of 52 uniform keys
        cards = np.argpartition(rng.random((n, 52)), 5, axis=1)[:, :5]
        X[start:start + n, 0::2] = cards // 13 + 1
        X[start:start + n, 1::2] = cards % 13 + 1
    return X, poker_hand_rank(X)


def load_data(source, label_column=None, split: str = "train", n_features=None, zero_based="auto",
              n_labels=None):
    """Labelled data from a file or from arrays: (X, y), X float64 (NaN for missing values).

    y is one label per row, or, for multi-label data, an (n, L) indicator matrix of 0 and 1
    (what ``BoostClassifier.fit`` takes for multi-label learning).

    ``source`` is a path, or a pair (X, y) of arrays: NumPy, pandas, scipy.sparse (X, or a
    multi-label y; an absent entry is the value 0) or CuPy (copied to the host once). A file is read by its extension:

    - ``.libsvm``, ``.svm``, ``.svmlight``, ``.txt``: LibSVM / SVMlight text (the format the
      papers' datasets are published in), sparse or dense, 0- or 1-based feature indices; an
      absent entry is the value 0. ``zero_based``: True (indices start at 0), False (at 1) or
      "auto" (at 0 if the file holds an index 0, else at 1; scikit-learn's rule). ``n_features``:
      the width of X, for a file read against a model or a training file: the file's rows may
      lack trailing features (they are 0), and a higher index is an error. Read a test file
      with its training file's width and base: on its own, a test file of a 0-based training
      set that does not happen to use feature 0 would read 1-based, every value one feature
      to the left. Both are for LibSVM files only: a CSV or .npz file has its own width.
      Multi-label LibSVM files (the LIBSVM collection's format: ``0,3 1:0.5 ...``, the labels
      of a row separated by commas, none for an empty set) give the indicator matrix of the
      label ids 0 .. L-1, L the largest id + 1 or ``n_labels`` (a model's or training file's
      number of labels; then a single-label file is read as one label per row of L).
    - ``.csv``: comma-separated numbers, UTF-8 (a byte order mark, as Excel writes, is skipped),
      with or without a header line (the first line is a header where it names a column of
      numbers, or is pandas' ``0,1,2,...``, or holds counting numbers and a name that its
      column does not repeat below); the label is the column ``label_column`` (a name, or an
      index from 0, negative from the end; default: a column named "label", "class", "target"
      or "y" if the header has one, else the last column). An empty feature field is a missing
      value (NaN); an empty label field is an error.
    - ``.npz``: arrays ``X`` and ``y``, or ``X_train``/``y_train`` (``split="train"``) and
      ``X_test``/``y_test`` (``split="test"``), as in the benchmark data files; ``Y`` in place
      of ``y`` is a multi-label indicator matrix (as in ``yeast.npz``).
    """
    return _load_data(source, label_column, split, n_features, zero_based, n_labels)[:2]


def _load_data(source, label_column=None, split="train", n_features=None, zero_based="auto", n_labels=None):
    """``load_data``'s (X, y), and the base a LibSVM file was read with (else "auto"), for the
    files read with it (the command line's ``train --eval``)."""
    import os

    if isinstance(source, (tuple, list)) and len(source) == 2:
        from ._validation import host_labels, to_host

        X, y = to_host(source[0]), host_labels(source[1])  # (y: a sparse indicator matrix densified)
        if hasattr(X, "toarray"):
            X = X.toarray()
        return np.asarray(X, dtype=np.float64), np.asarray(y), "auto"
    path = os.fspath(source)
    ext = os.path.splitext(path)[1].lower()
    if ext in _LIBSVM:
        return _load_svmlight(path, n_features, zero_based, n_labels)
    if ext == ".npz":
        return (*_load_npz(path, split), "auto")
    if ext == ".csv":
        return (*_load_csv(path, label_column)[:2], "auto")
    raise _unknown_format(path, ext)


_LIBSVM = (".libsvm", ".svm", ".svmlight", ".txt")


def _unknown_format(path, ext) -> ValueError:
    return ValueError(f"{path}: unknown data format {ext!r}; use .libsvm/.svm/.txt (LibSVM), .csv or .npz.")


def _load_npz(path, split, labelled=True):
    """(X, y) of an .npz file (y None where not labelled: X alone is enough then); numpy's
    errors, which do not name the file and can mislead (a file that is not a zip archive is
    "pickled data"), as messages that name it."""
    import zipfile

    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, EOFError, zipfile.BadZipFile):
        raise ValueError(f"{path} is not an .npz file (a zip archive of arrays, as np.savez writes): it is damaged, "
                         "empty or of another format.") from None
    if not isinstance(data, np.lib.npyio.NpzFile):  # a single array (.npy format) named .npz
        raise ValueError(f"{path} holds one array (the .npy format), not named arrays; save the data with "
                         "np.savez(path, X=X, y=y) (or X_train, y_train, X_test, y_test).")
    with data:
        pairs = [("X", "y"), ("X", "Y"), (f"X_{split}", f"y_{split}"), (f"X_{split}", f"Y_{split}")]
        if not labelled:
            pairs += [("X", None), (f"X_{split}", None)]
        for X_key, y_key in pairs:
            if X_key in data and (y_key is None or y_key in data):
                X = _npz_array(path, data, X_key)
                if X.ndim != 2:
                    raise ValueError(f"{path}: {X_key} has shape {X.shape}; it must be 2-D, (n_samples, n_features) "
                                     "(a single feature as one column: X.reshape(-1, 1)).")
                try:
                    if X.dtype.kind in "cmM":  # (complex: the cast drops the imaginary parts; dates: their ticks)
                        raise TypeError
                    X = X.astype(np.float64)
                except (TypeError, ValueError):
                    raise ValueError(f"{path}: {X_key} must hold numbers; it has dtype {X.dtype}.") from None
                return X, (None if y_key is None else _npz_array(path, data, y_key))
        wanted = (f"X and y (or X_{split} and y_{split}; Y for multi-label data)" if labelled
                  else f"X (or X_{split})")
        raise ValueError(f"{path} has no arrays {wanted}; it has {list(data)}.")


def _npz_array(path, data, key) -> np.ndarray:
    """An array of an .npz file, numpy's errors as messages that name the file and the array."""
    import tokenize
    import zipfile
    import zlib

    try:
        array = data[key]
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise ValueError(f"{path}: array {key} cannot be read ({exc}).") from None
        raise ValueError(f"{path}: array {key} holds Python objects (dtype object), which are not loaded, as loading "
                         "them could run code; save it as numbers or strings (arr.astype(float) or "
                         "arr.astype(str)).") from None
    # a damaged archive, or array header (numpy parses it with tokenize; a shape too large to allocate)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, tokenize.TokenError, SyntaxError, MemoryError) as exc:
        raise ValueError(f"{path}: array {key} cannot be read ({type(exc).__name__}: {exc}); the file may be "
                         "damaged.") from None
    if not isinstance(array, np.ndarray):  # a member that is no .npy array: numpy gives its bytes
        raise ValueError(f"{path}: {key} is not an array (np.savez's .npy format); save the data with "
                         "np.savez(path, X=X, y=y).")
    return array


def _load_svmlight(path, n_features=None, zero_based="auto", n_labels=None, labelled=True):
    """(X, y, zero_based) of a LibSVM file; zero_based as decided ("auto" when the file has no
    entry to tell by). The indices are read as written and the base applied here, so that a
    file read with a given base or width is checked against them with a message that says so.
    y is an indicator matrix for a multi-label file, or where n_labels is given; None where not
    labelled (the labels are then neither needed nor checked: rows may have none)."""
    import scipy.sparse
    from sklearn.datasets import load_svmlight_file

    if zero_based not in (True, False, "auto"):
        raise ValueError(f'zero_based must be True, False or "auto", got {zero_based!r}.')
    if zero_based != "auto":
        zero_based = bool(zero_based)
    multilabel, unlabelled = _has_label_sets(path)
    if labelled and unlabelled is not None:
        import warnings

        warnings.warn(f"{path}: line {unlabelled} has no label (it starts with a feature), so the file is read as "
                      "multi-label data, whose lines list their labels (comma-separated; none: an empty set). If "
                      "it holds one label per line, give that line its label or drop it.", UserWarning, stacklevel=4)
    try:
        raw, y = load_svmlight_file(_without_bom(path), zero_based=True, multilabel=multilabel)  # indices as written
    except ValueError as exc:
        raise _svmlight_error(path, exc) from None
    except OverflowError:
        raise ValueError(f"{path} has a feature index too large to read (beyond 2**31); check the file for an index "
                         "out of place.") from None
    if not labelled:
        y = None
    elif multilabel or n_labels is not None:
        y = _label_sets(path, [tuple(v) for v in y] if multilabel else [(v,) for v in y], n_labels)
    raw = scipy.sparse.csr_matrix(raw)
    indices = raw.indices
    if zero_based == "auto" and indices.size:
        zero_based = bool(indices.min() == 0)
    offset = 1 if zero_based is False else 0
    if offset and indices.size and indices.min() == 0:
        raise ValueError(f"{path} has feature index 0, but is read 1-based (zero_based=False, as its training "
                         "file is): a test file must number the features as its training file does.")
    last = int(indices.max()) if indices.size else offset - 1
    width = last + 1 - offset
    if n_features is not None:
        if width > n_features:
            raise ValueError(
                f"{path} has {width} features (indices up to {last}, read {offset}-based), more than the "
                f"{n_features} of the model or training file it goes with: its rows may lack the last features "
                "(an absent entry is 0), but not have more.")
        width = int(n_features)
    _check_dense(path, raw.shape[0], width, "its features", f"feature index {width - 1 + offset}")
    X = scipy.sparse.csr_matrix((raw.data, indices - offset, raw.indptr), shape=(raw.shape[0], width))
    return X.toarray(), (y if y is None or y.ndim == 2 else _labels(y, path)), zero_based


def _svmlight_error(path, exc) -> ValueError:
    """scikit-learn's parse error, which names neither the file nor the line (and may hold a
    binary file's bytes), as one that names both: the file is scanned again for the first line
    that does not parse."""
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return ValueError(f"{path} is gzip-compressed; decompress it first (gunzip).")
        f.seek(0)
        start = f.read(1 << 16)
        if b"\r" in start.rstrip(b"\r") and b"\n" not in start:
            return ValueError(f"{path} ends its lines with a carriage return alone (classic Mac OS text); convert "
                              "them to newlines (for example: tr '\\r' '\\n').")
        f.seek(0)
        for number, line in enumerate(f, start=1):
            problem = _svmlight_line_problem(line[3:] if number == 1 and line.startswith(b"\xef\xbb\xbf") else line)
            if problem:
                return ValueError(f"{path}, line {number}: {problem}; a LibSVM line is 'label index:value ...' "
                                  "(labels and values numbers, indices increasing integers).")
    return ValueError(f"{path} is not a valid LibSVM file: {str(exc)[:200]}")


def _svmlight_line_problem(line: bytes):
    """What is wrong with a line of a LibSVM file, or None."""
    def show(field):
        text = field.decode("utf-8", "replace")
        return repr(text if len(text) <= 40 else text[:40] + "...")

    fields = line.split(b"#", 1)[0].split()
    if fields and b":" not in fields[0]:  # the label field (absent: an empty label set)
        if not all(_is_number(v) for v in fields[0].split(b",")):
            return f"the label {show(fields[0])} is not a number (or numbers separated by commas)"
        fields = fields[1:]
    previous = -1
    for at, field in enumerate(fields):
        index, _, value = field.partition(b":")
        if index == b"qid":
            if at > 0:
                return f"{show(field)} follows a feature: SVMlight's query id comes right after the label"
            continue
        if not (index.strip().isdigit() and _is_number(value)):
            return f"{show(field)} is not index:value (an integer index >= 0, a number)"
        if int(index) <= previous:
            return f"feature index {int(index)} follows index {previous} (the indices of a line must increase)"
        previous = int(index)
    return None


def _without_bom(path):
    """path, or where the file starts with a UTF-8 byte order mark (as Notepad and Excel write;
    CSV files are read past one too), its bytes after the mark: scikit-learn's reader took the
    mark for part of the first label."""
    import io

    with open(path, "rb") as f:
        if f.read(3) != b"\xef\xbb\xbf":
            return path
        return io.BytesIO(f.read())


def _has_label_sets(path) -> tuple:
    """(whether a LibSVM file is multi-label: a row's label field holds a comma, or is empty
    (the line starts with a feature, ``index:value``); the number of the first line without a
    label where other lines have one and no label field holds a comma, else None: the file is
    then multi-label only by its empty label sets, which a single-label file with a line's label
    left out also has)."""
    empty, labels = None, False
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            line = line.split(b"#", 1)[0]
            if not line.strip():
                continue
            first = line.split(None, 1)[0]
            if b"," in first:
                return True, None
            if b":" not in first:
                labels = True
            elif empty is None:
                empty = number
    return empty is not None, empty if labels else None


def _label_sets(path, sets, n_labels=None) -> np.ndarray:
    """The (n, L) 0/1 indicator matrix of label sets (tuples of label ids, as floats), L the
    largest id + 1 or n_labels."""
    def is_id(v):
        return float(v).is_integer() and v >= 0  # not NaN, inf, negative or fractional

    ids = [int(v) for labels in sets for v in labels if is_id(v)]
    if len(ids) != sum(len(labels) for labels in sets):
        bad = next(v for labels in sets for v in labels if not is_id(v))
        raise ValueError(f"{path}: the labels of multi-label data must be label ids 0, 1, 2, ...; it has {bad!r}.")
    width = max(ids, default=-1) + 1
    if width == 0 and n_labels is None:
        raise ValueError(f"{path} has no labels: every row starts with a feature (index:value), an empty label "
                         "set. Give each row its label, or its labels separated by commas (0,3 1:0.5 ...).")
    if n_labels is not None:
        if width > n_labels:
            raise ValueError(f"{path} has label id {width - 1}, but the model or training file it goes with has "
                             f"{n_labels} labels (ids 0 .. {n_labels - 1}).")
        width = int(n_labels)
    _check_dense(path, len(sets), width, "its label matrix", f"label id {width - 1}")
    Y = np.zeros((len(sets), width), dtype=np.int64)
    for i, labels in enumerate(sets):
        for v in labels:
            Y[i, int(v)] = 1
    return Y


def _check_dense(path, n_rows: int, width: int, what: str, largest: str) -> None:
    """Refuse, before allocating, a dense (n_rows, width) float64 array that memory cannot hold
    (a typo such as a huge feature index or label id in a LibSVM file asks for one)."""
    from ._validation import available_memory

    needed = 8 * n_rows * width
    available = available_memory()
    if available is not None and needed > available:
        raise MemoryError(f"{path}: {what} would take {needed / 2**30:.1f} GiB ({n_rows} rows x {width} columns, up "
                          f"to its {largest}), and {available / 2**30:.1f} GiB of memory is available; check the "
                          "file for an index or id out of place.")


#: A file's labels are read as float64 numbers, whose integers are exact up to this magnitude:
#: beyond it, two labels of the text can read as one number (9007199254740993 as ...992)
EXACT_LABEL = 2.0 ** 53


def _labels(y: np.ndarray, path) -> np.ndarray:
    """Integer-valued float labels (LibSVM stores them as floats) as integers; labels that
    float64 may not have read exactly are refused (their classes could merge silently)."""
    far = np.flatnonzero(np.isfinite(y) & (np.abs(y) >= EXACT_LABEL))
    if far.size:
        raise ValueError(
            f"{path}: the label {y[far[0]]:.17g} (data row {far[0] + 1}) is too large to be read exactly: labels "
            "are read as float64 numbers, whose integers are exact below 2**53 = 9007199254740992, so that distinct "
            "labels could merge. Number the classes 0, 1, 2, ... (or write them as names, in a CSV file).")
    return y.astype(np.int64) if np.all(np.mod(y, 1) == 0) else y


def load_features(path, split: str = "train", n_features=None, zero_based="auto") -> np.ndarray:
    """X alone, for prediction: float64, NaN for missing values; read by the extension as
    ``load_data`` reads X, but with no label needed. A CSV file's columns are all features (no
    label column); a LibSVM file's labels are not read, so its rows may have none (a line then
    starts with its first ``index:value``), and ``n_features`` and ``zero_based`` are as in
    ``load_data``; an .npz file gives its ``X`` or ``X_{split}`` (a label array may be absent)."""
    import os

    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext in _LIBSVM:
        return _load_svmlight(path, n_features, zero_based, labelled=False)[0]
    if ext == ".npz":
        return _load_npz(path, split, labelled=False)[0]
    if ext == ".csv":
        return _csv_features(path)[0]
    raise _unknown_format(path, ext)


def _csv_features(path, names=None):
    """(X, names) of a CSV file of feature columns only (no label): names, its header's (None
    for a file without one; the names argument: the model's feature names, _is_header's hint)."""
    header, body, lines = _read_csv(path, None if names is None else [str(n) for n in names])
    _width(path, header, body, lines)
    return _floats(path, header, body, lines), header


def _floats(path, header, body, lines, label_index=None) -> np.ndarray:
    """The fields of a CSV file's rows but the label column, as float64 (NaN for empty fields)."""
    columns = [j for j in range(len(body[0])) if j != label_index]
    try:
        return np.array([[_number(r[j]) if r[j].strip() else np.nan for j in columns] for r in body], dtype=np.float64)
    except ValueError:  # where the field that is not a number is, for the message
        row, line, j = next((row, line, j) for row, line in zip(body, lines) for j in columns if not _is_field(row[j]))
        column = f"column {header[j]!r}" if header else f"column {j} (from 0)"
        raise ValueError(f"{path}, line {line}, {column}: {row[j][:40]!r} is not a number; the feature columns must "
                         "hold numbers (an empty field is a missing value).") from None


def _number(text) -> float:
    """A field's number as float() reads it (str or bytes), but without Python's digit
    separators: "1_000" is not a number (pandas and the LibSVM readers do not read it either).
    ValueError where it is not one."""
    if ("_" if isinstance(text, str) else b"_") in text:
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def _is_number(text) -> bool:
    """Whether text (str or bytes) is a number (_number)."""
    try:
        _number(text)
        return True
    except ValueError:
        return False


def _is_field(text) -> bool:
    """Whether a CSV field is a number or empty (a missing value)."""
    return _is_number(text) or text.strip() == ""


def _is_header(rows, names=None, classes=None) -> bool:
    """Whether the first of a CSV file's rows is a header (column names), not data.

    A header: a line that holds every name of names (the features of the model the file is
    read against, where it knows them); a line with a name (a text with a letter or digit)
    over a column of numbers; a line whose text fields are all over text columns (labels) and
    one of them never recurs below and is no label of classes (a label column's name: a class
    label recurs), while its numbers are plain counting numbers (names such as 0, 1, 2, not
    values such as 6.3); or 0, 1, 2, ... alone, the names pandas gives unnamed columns
    (``DataFrame(array).to_csv(index=False)``; an empty first field and 0, 1, ... with the
    index), from three columns. Anything else is data: numbers, numbers and labels (a file
    without a header whose labels are text), or a line with a field such as "?", which the
    reader then reports as not a number.
    """
    first, body = [v.strip() for v in rows[0]], rows[1:]
    if names is not None and set(names) <= set(first):
        return True
    texts = [j for j, v in enumerate(first) if not _is_field(v)]
    if not texts:
        numbered = [str(j) for j in range(len(first))]
        return len(first) >= 3 and first in (numbered, [""] + numbered[:-1])
    if not all(any(c.isalnum() for c in first[j]) for j in texts):
        return False
    columns = {j: [row[j].strip() for row in body if j < len(row)] for j in texts}
    if any(columns[j] and all(_is_field(v) for v in columns[j]) for j in texts):
        return True
    unrepeated = [first[j] for j in texts if first[j] not in columns[j]]
    if not unrepeated or (classes is not None and all(v in classes for v in unrepeated)):
        return False
    return all(v.isdigit() for j, v in enumerate(first) if j not in columns and v)


def _read_csv(path, names=None, classes=None):
    """(header or None, rows, line of each row) of a CSV file; the first line is a header as
    _is_header decides (names, classes: its hints, as str). Blank lines are left out, so the
    lines are kept for the messages."""
    import csv
    import io

    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")  # -sig: Excel's "CSV UTF-8" starts with a byte order mark
    except UnicodeDecodeError as exc:
        if data[:2] == b"\x1f\x8b":
            raise ValueError(f"{path} is gzip-compressed; decompress it first (gunzip).") from None
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}, line {line}: byte {data[exc.start]:#04x} is not UTF-8 text; save the file as CSV "
                         "in UTF-8.") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, lines = [], []
    try:
        for row in reader:
            if row:
                rows.append(row)
                lines.append(reader.line_num)
    except csv.Error as exc:  # not a ValueError: it would escape as a traceback
        raise ValueError(f"{path}, line {reader.line_num}: not valid CSV ({exc}).") from None
    if not rows:
        raise ValueError(f"{path} is empty.")
    if not _is_header(rows, names, classes):
        return None, rows, lines
    return [v.strip() for v in rows[0]], rows[1:], lines[1:]


def _width(path, header, body, lines) -> int:
    """The number of fields of every row: the header's, else the first row's."""
    if not body:
        raise ValueError(f"{path} has no data rows, only a header line.")
    width = len(header) if header is not None else len(body[0])
    first = header if header is not None else body[0]
    separator = next((c for c in (";", "\t", "|") if width == 1 and c in first[0]), None)
    if separator:  # one field a line that holds another separator: not the file it seems
        raise ValueError(f"{path}: its fields are separated by {separator!r}, not commas; gpuboost reads "
                         "comma-separated files: save it with commas.")
    for row, line in zip(body, lines):
        if len(row) != width:
            raise ValueError(
                f"{path}: line {line} has {len(row)} fields, but the {'header' if header is not None else 'first row'} "
                f"has {width}; give every row the same columns (an empty field is a missing value).")
    return width


def _label_index(path, header, width, label_column) -> int:
    """The label column's index in a CSV file of width columns (label_column: a name, an index
    from 0, negative from the end, or None: a column named label, class, target or y, else the
    last)."""
    if label_column is None:
        names = [n.lower() for n in header] if header else []
        label_index = next((names.index(n) for n in ("label", "class", "target", "y") if n in names), width - 1)
    elif isinstance(label_column, str) and not label_column.lstrip("-").isdigit():
        if not header:
            raise ValueError(f"{path}: no column named {label_column!r}: the file has no header line of column "
                             f"names (its first line is data); give the label column's index (0 .. {width - 1}, "
                             "or -1 for the last), or add a header line.")
        if label_column not in header:
            raise ValueError(f"{path}: no column named {label_column!r} (columns: {header}).")
        label_index = header.index(label_column)
    elif isinstance(label_column, (str, int, np.integer)) and not isinstance(label_column, bool):
        label_index = int(label_column)  # negative: from the end, as Python counts
        if not -width <= label_index < width:
            raise ValueError(f"{path}: there is no label column {label_index}: the file has {width} columns "
                             f"(indices 0 .. {width - 1}, or -1 .. -{width} from the end).")
        label_index %= width
    else:
        raise TypeError(f"label_column must be a column name or an integer index, got {label_column!r}.")
    if width < 2:
        raise ValueError(f"{path} has a single column, the label: there is no feature column.")
    return label_index


def _load_csv(path, label_column, labelled=True, n_features=None, names=None, classes=None):
    """(X, y, names) of a CSV file: names, its header's feature columns (None for a file
    without a header); y None where not labelled (the label column is dropped unread:
    prediction needs no label, so a row's may be empty).

    Read against a model (or a training file): n_features, where not labelled, a file of that
    many columns and no label_column has no label column (its columns are all features);
    names, the model's feature names (None: it has none; a header with one other column has
    its label there, where label_column is None); classes, its classes (None: not known).
    The labels are numbers where every one is, else text; where classes are text, text always
    (the file's 0 and 1 are the classes "0" and "1", whatever else it holds), and where they
    are numbers, a label that is not one is an error that names it.
    """
    text_classes = classes is not None and all(isinstance(c, str) for c in classes)
    hints = None if classes is None else {str(c) for c in classes}
    names = None if names is None else [str(name) for name in names]
    header, body, lines = _read_csv(path, names, hints)
    width = _width(path, header, body, lines)
    if not labelled and label_column is None and width == n_features:
        return _floats(path, header, body, lines), None, header
    others = [] if header is None or names is None else [j for j, v in enumerate(header) if v not in names]
    if label_column is None and len(others) == 1:
        label_index = others[0]  # the one column that is not a feature of the model: its label, whatever its name
    else:
        label_index = _label_index(path, header, width, label_column)
    names = None if header is None else [name for j, name in enumerate(header) if j != label_index]
    twice = [] if names is None else [name for name in dict.fromkeys(names) if names.count(name) > 1]
    if twice:  # (as BoostClassifier refuses a DataFrame's: a model matches the columns by name)
        raise ValueError(f"{path}: its header names more than one feature column {twice[0]!r}; a model matches the "
                         "columns of the files it predicts on by name, so every column needs its own. Rename them.")
    if not labelled:
        return _floats(path, header, body, lines, label_index), None, names
    texts = [r[label_index].strip() for r in body]
    try:
        if text_classes:
            raise ValueError
        y = np.array([_number(t) if t else np.nan for t in texts])
        missing = np.isnan(y)
    except ValueError:
        y = np.array(texts)  # text labels
        missing = y == ""
        if classes is not None and not text_classes:
            words = list(dict.fromkeys(t for t in texts if t and not _is_number(t)))
            raise ValueError(f"{path} holds labels that are not numbers: {words[:5]}"
                             f"{' ...' if len(words) > 5 else ''}; the classes it is read against are "
                             f"{list(classes)[:10]}{' ...' if len(classes) > 10 else ''}.") from None
    if missing.any():
        # the estimator's message for missing labels, with the lines of the file they are on
        from ._validation import _labels_1d

        at = [str(lines[i]) for i in np.flatnonzero(missing)]
        where = f"line {at[0]}" if len(at) == 1 else f"lines {', '.join(at[:5])}{' ...' if len(at) > 5 else ''}"
        try:
            _labels_1d(np.where(missing, None, y.astype(object)))
        except ValueError as exc:
            raise ValueError(f"{path}, {where}: {exc}") from None
    if y.dtype.kind == "f":
        y = _labels(y, path)
    return _floats(path, header, body, lines, label_index), y, names
