"""The poker-hand generator: the labels follow the rules, the deals are fair. The data-file
loaders: a test file is read with its training file's width and base; bad CSV files are clear errors."""

import re
import warnings

import numpy as np
import pytest

from gpuboost.datasets import load_data, load_features, make_poker_hands, poker_hand_rank


def hand(*cards):
    """cards as (suit, rank) pairs -> one row of 10 features"""
    return np.array([v for card in cards for v in card])


@pytest.mark.parametrize(
    "cards, label",
    [
        (((1, 2), (2, 5), (3, 9), (4, 11), (1, 13)), 0),
        (((1, 2), (2, 2), (3, 9), (4, 11), (1, 13)), 1),
        (((1, 2), (2, 2), (3, 9), (4, 9), (1, 13)), 2),
        (((1, 2), (2, 2), (3, 2), (4, 9), (1, 13)), 3),
        (((1, 5), (2, 6), (3, 7), (4, 8), (1, 9)), 4),
        (((1, 1), (2, 2), (3, 3), (4, 4), (1, 5)), 4),  # ace low
        (((1, 10), (2, 11), (3, 12), (4, 13), (1, 1)), 4),  # ace high
        (((1, 11), (2, 12), (3, 13), (4, 1), (1, 2)), 0),  # no wrap-around
        (((3, 2), (3, 5), (3, 9), (3, 11), (3, 13)), 5),
        (((1, 2), (2, 2), (3, 2), (4, 9), (1, 9)), 6),
        (((1, 2), (2, 2), (3, 2), (4, 2), (1, 9)), 7),
        (((2, 5), (2, 6), (2, 7), (2, 8), (2, 9)), 8),
        (((4, 1), (4, 13), (4, 12), (4, 11), (4, 10)), 9),
    ],
)
def test_hand_rules(cards, label):
    assert poker_hand_rank(hand(*cards)[None, :])[0] == label


def test_deals_are_distinct_cards_with_the_known_frequencies():
    X, y = make_poker_hands(200_000, random_state=0)
    assert X.shape == (200_000, 10) and X.dtype == np.uint8
    cards = (X[:, 0::2].astype(int) - 1) * 13 + (X[:, 1::2] - 1)
    assert np.all(np.sort(cards, axis=1)[:, 1:] != np.sort(cards, axis=1)[:, :-1])
    frequency = np.bincount(y, minlength=10) / len(y)
    # exact probabilities of 5-card hands: nothing 0.5012, pair 0.4226, two pairs 0.0475,
    # three of a kind 0.0211 (binomial sd at n = 200000 is at most 0.0011)
    np.testing.assert_allclose(frequency[:4], [0.5012, 0.4226, 0.0475, 0.0211], atol=0.005)


def test_same_seed_same_data():
    a = make_poker_hands(1000, random_state=5, chunk_size=300)
    b = make_poker_hands(1000, random_state=5, chunk_size=300)
    np.testing.assert_array_equal(a[0], b[0])


def test_bad_size():
    with pytest.raises(ValueError, match="n_samples"):
        make_poker_hands(0)


# -- data files (load_data, load_features) ---------------------------------------------------

def test_libsvm_file_read_with_the_training_files_width_and_base(tmp_path):
    # absent entries are zeros: a test file whose rows lack the last features is a normal file
    (tmp_path / "b.libsvm").write_text("0 1:1 2:3\n1 1:2\n")
    X, y = load_data(tmp_path / "b.libsvm", n_features=3)
    np.testing.assert_array_equal(X, [[1, 3, 0], [2, 0, 0]])
    assert y.tolist() == [0, 1]
    (tmp_path / "c.libsvm").write_text("0 1:1 4:3\n")
    with pytest.raises(ValueError, match=r"c.libsvm has 4 features \(indices up to 4, read 1-based\), more than the 3"):
        load_data(tmp_path / "c.libsvm", n_features=3)
    # a 0-based training set's test file that happens not to use feature 0: "auto" would read
    # it 1-based and shift every value one feature to the left; the training file's base does not
    (tmp_path / "d.libsvm").write_text("0 1:5 2:6\n")
    np.testing.assert_array_equal(load_data(tmp_path / "d.libsvm", n_features=3, zero_based=True)[0], [[0, 5, 6]])
    np.testing.assert_array_equal(load_data(tmp_path / "d.libsvm", n_features=3)[0], [[5, 6, 0]])
    (tmp_path / "e.libsvm").write_text("0 0:5 2:6\n")
    with pytest.raises(ValueError, match="e.libsvm has feature index 0, but is read 1-based"):
        load_data(tmp_path / "e.libsvm", zero_based=False)


def test_empty_csv_label_is_a_missing_label(tmp_path):
    (tmp_path / "a.csv").write_text("f1,label\n1,0\n2,1\n3,\n4,1\n5,0\n")
    with pytest.raises(ValueError, match=r"a.csv, line 4: y has 1 missing labels \(NaN or None\), at rows \[2\]; "
                                         "drop those rows or give them a class"):
        load_data(tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("x,label\n1,cat\n2, \n3,dog\n4,\n")  # text labels
    message = r"b.csv, lines 3, 5: y has 2 missing labels \(NaN or None\), at rows \[1, 3\];"
    with pytest.raises(ValueError, match=message):
        load_data(tmp_path / "b.csv")


@pytest.mark.parametrize("load", [load_data, load_features])
def test_ragged_or_header_only_csv(tmp_path, load):
    (tmp_path / "ragged.csv").write_text("f1,f2,label\n1,2,0\n\n3,4\n5,6,1\n")
    with pytest.raises(ValueError, match="ragged.csv: line 4 has 2 fields, but the header has 3"):
        load(tmp_path / "ragged.csv")
    (tmp_path / "noheader.csv").write_text("1,2,0\n3,4,1,7\n")
    with pytest.raises(ValueError, match="noheader.csv: line 2 has 4 fields, but the first row has 3"):
        load(tmp_path / "noheader.csv")
    (tmp_path / "header.csv").write_text("f1,f2,label\n")
    with pytest.raises(ValueError, match="header.csv has no data rows"):
        load(tmp_path / "header.csv")


@pytest.mark.parametrize("text, rows, names", [
    ("1.5,2,cat\n0.5,1,dog\n2,3,cat\n1,1,dog\n", 4, None),  # no header, text labels (each class recurs)
    ("1.5,2,0\n0.5,1,1\n", 2, None),  # numbers only: data
    ("f1,f2,label\n1.5,2,0\n0.5,1,1\n", 2, ["f1", "f2"]),  # names over numbers
    ("0,1,2\n1.5,2,0\n0.5,1,1\n", 2, ["0", "1"]),  # pandas' names of unnamed columns
    (",0,1,2\n0,1.5,2,0\n1,0.5,1,1\n", 2, ["", "0", "1"]),  # the same, with pandas' index column
    ("0,1,species\n1.5,2,cat\n0.5,1,dog\n", 2, ["0", "1"]),  # a label column's name over text labels
    ("a,b,species\n1.5,2,cat\n0.5,1,cat\n", 2, ["a", "b"]),
    ("1.5,2,owl\n0.5,1,dog\n2,3,cat\n", 3, None),  # no header, the first row's class only there
    ("6.3,2.9,owl\n", 1, None),  # one row
], ids=["text labels", "numbers", "names", "pandas", "pandas index", "label name", "one class", "rare class",
        "one row"])
def test_a_csv_header_is_told_from_data(tmp_path, text, rows, names):
    """The first line is a header where it names columns, and data where it is a row: a file
    without a header whose labels are text keeps its first row (no invented header), and the
    numbers pandas names unnamed columns by are a header (no invented row, or class)."""
    from gpuboost.datasets import _load_csv

    (tmp_path / "d.csv").write_text(text)
    X, y, header = _load_csv(tmp_path / "d.csv", None)
    assert X.shape[0] == len(y) == rows and header == names


def test_a_csv_file_read_against_a_model_uses_what_it_knows(tmp_path):
    """Counting numbers and a label seen nowhere else could be names ("0,1,species"): read
    against a model, a label that is one of its classes makes the line data, and a line that
    holds the model's feature names is its header; labels that are not numbers, where the
    classes are, are named."""
    from gpuboost.datasets import _load_csv

    (tmp_path / "d.csv").write_text("5,3,owl\n4,1,dog\n2,3,cat\n")
    assert _load_csv(tmp_path / "d.csv", None)[2] == ["5", "3"]  # (alone: a header)
    X, y, names = _load_csv(tmp_path / "d.csv", None, classes=["cat", "dog", "owl"])
    assert names is None and y.tolist() == ["owl", "dog", "cat"] and X.shape == (3, 2)
    (tmp_path / "n.csv").write_text("0,1,2,label\n1,2,3,0\n4,5,6,1\n")
    assert _load_csv(tmp_path / "n.csv", None, names=["2", "0", "1"])[2] == ["0", "1", "2"]
    (tmp_path / "m.csv").write_text("x,label\n1,0\n2,cat\n3,0\n4,emu\n")
    with pytest.raises(ValueError, match=r"m.csv holds labels that are not numbers: \['cat', 'emu'\]; the classes it "
                                         r"is read against are \[0, 1\]"):
        _load_csv(tmp_path / "m.csv", None, classes=[0, 1])


@pytest.mark.parametrize("text, message", [
    ("5.1,?,0\n4.9,3.0,1\n4.7,3.2,0\n", r"line 1, column 1 \(from 0\): '\?' is not a number"),
    ("a,b,label\n1_000,2,1\n3,4,2\n", r"line 2, column 'a': '1_000' is not a number"),
], ids=["question mark", "digit separator"])
def test_csv_fields_that_are_no_numbers(tmp_path, text, message):
    """A "?" in a file's first line is a field that is not a number, not a header's name; and
    "1_000" is no number (Python's float reads it; pandas does not)."""
    (tmp_path / "d.csv").write_text(text)
    with pytest.raises(ValueError, match=message):
        load_data(tmp_path / "d.csv")


def test_multilabel_libsvm_and_npz(tmp_path):
    (tmp_path / "m.svm").write_text("0,2 1:0.5 2:1\n 1:0.2 2:3\n2 1:0.1\n1,0 2:4  # a comment\n")
    X, Y = load_data(tmp_path / "m.svm")
    np.testing.assert_array_equal(Y, [[1, 0, 1], [0, 0, 0], [0, 0, 1], [1, 1, 0]])  # an empty set on row 2
    np.testing.assert_array_equal(X, [[0.5, 1], [0.2, 3], [0.1, 0], [0, 4]])
    assert load_data(tmp_path / "m.svm", n_labels=5)[1].shape == (4, 5)
    (tmp_path / "s.svm").write_text("2 1:0.5\n0 1:0.2\n")  # one label a row, read against a 4-label model
    np.testing.assert_array_equal(load_data(tmp_path / "s.svm", n_labels=4)[1], [[0, 0, 1, 0], [1, 0, 0, 0]])
    (tmp_path / "b.svm").write_text("0,1.5 1:0.5\n")
    with pytest.raises(ValueError, match="labels of multi-label data must be label ids 0, 1, 2, ...; it has 1.5"):
        load_data(tmp_path / "b.svm")
    (tmp_path / "i.svm").write_text("0,inf 1:0.5\n")
    with pytest.raises(ValueError, match="labels of multi-label data must be label ids 0, 1, 2, ...; it has inf"):
        load_data(tmp_path / "i.svm")
    (tmp_path / "n.svm").write_text("1:0.5 2:1\n1:0.2\n")  # no label at all
    with pytest.raises(ValueError, match="n.svm has no labels: every row starts with a feature"):
        load_data(tmp_path / "n.svm")
    Yn = np.eye(3, dtype=np.uint8)[[0, 1, 2, 1]]
    np.savez(tmp_path / "m.npz", X_test=np.ones((4, 2)), Y_test=Yn)
    np.testing.assert_array_equal(load_data(tmp_path / "m.npz", split="test")[1], Yn)


def test_arrays_are_loaded_with_a_sparse_x_or_a_sparse_indicator_matrix():
    # a pair of arrays: a sparse X and a sparse multi-label y (an absent entry: 0) come back dense
    import scipy.sparse

    Y = np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0]])
    X, y = load_data((scipy.sparse.csr_matrix([[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]]), scipy.sparse.csr_matrix(Y)))
    np.testing.assert_array_equal(X, [[0, 2], [1, 0], [0, 0]])
    assert X.dtype == np.float64 and y.shape == (3, 3)
    np.testing.assert_array_equal(y, Y)
    X, y = load_data((np.ones((2, 2)), [3, 4]))
    np.testing.assert_array_equal(y, [3, 4])


def test_csv_with_a_byte_order_mark_and_label_column_indices(tmp_path):
    # Excel's "CSV UTF-8" starts with a byte order mark, which must not hide the "label" header
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbflabel,a,b\n1,4,3\n0,1,1\n")
    X, y = load_data(tmp_path / "b.csv")
    assert y.tolist() == [1, 0] and X.tolist() == [[4, 3], [1, 1]]
    assert load_data(tmp_path / "b.csv", label_column="-1")[1].tolist() == [3, 1]  # from the end
    for column in ("3", -4, 7):
        with pytest.raises(ValueError, match=rf"b.csv: there is no label column {column}: the file has 3 columns"):
            load_data(tmp_path / "b.csv", label_column=column)
    (tmp_path / "one.csv").write_text("label\n1\n0\n")
    with pytest.raises(ValueError, match="one.csv has a single column, the label: there is no feature column"):
        load_data(tmp_path / "one.csv")


@pytest.mark.parametrize("name, content, message", [
    ("t.libsvm", b"0 1:1 2:3\n1 1:2 2:cat\n", r"t.libsvm, line 2: '2:cat' is not index:value"),
    ("t.libsvm", b"0 1:1\ndog 1:2\n", r"t.libsvm, line 2: the label 'dog' is not a number"),
    ("t.libsvm", b"0 2:1 1:3\n", r"t.libsvm, line 1: feature index 1 follows index 2"),
    ("t.libsvm", b"\x1f\x8b\x08\x00rest", r"t.libsvm is gzip-compressed; decompress it first"),
    ("t.csv", b"a,b,label\n1,2,0\n3,x,1\n", r"t.csv, line 3, column 'b': 'x' is not a number"),
    ("t.csv", b"1,2,0\n3,x,1\n", r"t.csv, line 2, column 1 \(from 0\): 'x' is not a number"),
    ("t.csv", b"a,label\n1,0\n2,\xff\n", r"t.csv, line 3: byte 0xff is not UTF-8 text"),
    ("t.csv", b"a;b;label\n1;2;0\n", r"t.csv: its fields are separated by ';', not commas"),
    ("t.npz", b"not a zip archive", r"t.npz is not an .npz file \(a zip archive of arrays"),
], ids=["libsvm value", "libsvm label", "libsvm order", "gzip", "csv value", "csv value, no header", "csv bytes",
        "semicolons", "npz not a zip"])
def test_parse_errors_name_the_file_and_line(tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ValueError, match=message):
        load_data(tmp_path / name)


def test_npz_files_that_cannot_be_used(tmp_path):
    np.savez(tmp_path / "o.npz", X=np.array([[1, "a"]], dtype=object), y=np.array([0]))
    with pytest.raises(ValueError, match="o.npz: array X holds Python objects"):
        load_data(tmp_path / "o.npz")
    np.savez(tmp_path / "d.npz", X=np.arange(4.0), y=np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"d.npz: X has shape \(4,\); it must be 2-D"):
        load_data(tmp_path / "d.npz")
    for odd in (np.ones((2, 2)) * 1j, np.array([["2020-01-01"]], dtype="datetime64[D]")):
        np.savez(tmp_path / "c.npz", X=odd, y=np.array([0, 1][:len(odd)]))
        with pytest.raises(ValueError, match=re.escape(f"c.npz: X must hold numbers; it has dtype {odd.dtype}.")):
            load_data(tmp_path / "c.npz")
    import io
    import zipfile

    good = io.BytesIO()
    np.save(good, np.zeros((4, 2)))
    good = good.getvalue()
    with zipfile.ZipFile(tmp_path / "j.npz", "w") as z:  # a member that is no .npy array: numpy gives its bytes
        z.writestr("X.npy", good)
        z.writestr("y", b"junk")
    with pytest.raises(ValueError, match=r"j.npz: y is not an array \(np.savez's .npy format\)"):
        load_data(tmp_path / "j.npz")
    cut = bytearray(good)
    cut[8] = 0x10  # the header's length too short: its dict cut (numpy's tokenize error)
    with zipfile.ZipFile(tmp_path / "h.npz", "w") as z:
        z.writestr("X.npy", bytes(cut))
        z.writestr("y.npy", good)
    for load in (load_data, load_features):
        with pytest.raises(ValueError, match=r"h.npz: array X cannot be read \(TokenError: .*the file may be damaged"):
            load(tmp_path / "h.npz")


def test_load_features_reads_each_format_without_labels(tmp_path):
    (tmp_path / "u.libsvm").write_text("1:1 2:3\n0 2:1\n1,2 1:4\n")  # no label, one label, a label set
    X = load_features(tmp_path / "u.libsvm", n_features=3)
    np.testing.assert_array_equal(X, [[1, 3, 0], [0, 1, 0], [4, 0, 0]])
    X = load_features(tmp_path / "u.libsvm", zero_based=True)
    np.testing.assert_array_equal(X, [[0, 1, 3], [0, 0, 1], [0, 4, 0]])
    np.savez(tmp_path / "x.npz", X_test=np.eye(2))
    np.testing.assert_array_equal(load_features(tmp_path / "x.npz", split="test"), np.eye(2))
    with pytest.raises(ValueError, match=r"x.npz has no arrays X \(or X_train\)"):
        load_features(tmp_path / "x.npz")
    (tmp_path / "f.dat").write_text("1,2\n")
    with pytest.raises(ValueError, match="unknown data format '.dat'"):
        load_features(tmp_path / "f.dat")


def test_a_huge_feature_index_or_label_id_is_refused_before_allocating(tmp_path):
    """A typo of a LibSVM file (an index of 2 * 10**9) asks for a dense array no memory holds: a
    clear MemoryError that names the file, before anything is allocated (20 rows: 320 GB)."""
    from gpuboost.datasets import load_data

    (tmp_path / "f.libsvm").write_text("0 1:0.5 2000000000:1\n" + "1 2:0.25\n" * 19)
    with pytest.raises(MemoryError, match=r"f.libsvm: its features would take .* feature index 2000000000"):
        load_data(tmp_path / "f.libsvm")
    (tmp_path / "l.libsvm").write_text("0,2000000000 1:0.5\n" + "1 2:0.25\n" * 19)
    with pytest.raises(MemoryError, match=r"l.libsvm: its label matrix would take .* label id 2000000000"):
        load_data(tmp_path / "l.libsvm")
    (tmp_path / "o.libsvm").write_text("0 1:0.5 1000000000000:1\n1 2:0.25\n")
    with pytest.raises(ValueError, match=r"o.libsvm has a feature index too large to read"):
        load_data(tmp_path / "o.libsvm")


def test_labels_beyond_float64s_exact_integers_are_refused(tmp_path):
    # a file's labels are read as float64: 9007199254740993 would read as ...992 and merge with
    # it (and 1e20 overflow int64), so such labels are refused, not renumbered
    (tmp_path / "a.csv").write_text("x,label\n1,9007199254740991\n2,9007199254740993\n")
    with pytest.raises(ValueError, match=r"a.csv: the label 9007199254740992 \(data row 2\) is too large to be read "
                                         r"exactly.*Number the classes 0, 1, 2"):
        load_data(tmp_path / "a.csv")
    (tmp_path / "b.libsvm").write_text("1e20 1:1\n0 1:2\n")
    with pytest.raises(ValueError, match=r"b.libsvm: the label 1e\+20 \(data row 1\) is too large"):
        load_data(tmp_path / "b.libsvm")
    (tmp_path / "c.libsvm").write_text("9007199254740991 1:1\n-9007199254740991 1:2\n")  # the largest exact ones
    np.testing.assert_array_equal(load_data(tmp_path / "c.libsvm")[1], [2**53 - 1, -(2**53 - 1)])


def test_a_libsvm_file_with_a_byte_order_mark(tmp_path):
    # as a CSV file: the mark (Notepad's, Excel's) is not part of the first label ("'\ufeff1' is not a number")
    (tmp_path / "a.libsvm").write_bytes(b"\xef\xbb\xbf1 1:0.5 2:1\n0 1:0.2\n")
    X, y = load_data(tmp_path / "a.libsvm")
    np.testing.assert_array_equal(X, [[0.5, 1], [0.2, 0]])
    np.testing.assert_array_equal(y, [1, 0])
    np.testing.assert_array_equal(load_features(tmp_path / "a.libsvm"), X)
    (tmp_path / "b.libsvm").write_bytes(b"\xef\xbb\xbf1 1:x\n")  # a bad field on the first line: named as it is
    with pytest.raises(ValueError, match=r"b.libsvm, line 1: '1:x' is not index:value"):
        load_data(tmp_path / "b.libsvm")
    (tmp_path / "c.libsvm").write_bytes(b"1 1:0.5\r0 1:0.2\r")  # classic Mac OS line ends: one line of fields
    with pytest.raises(ValueError, match="c.libsvm ends its lines with a carriage return alone"):
        load_data(tmp_path / "c.libsvm")


def test_a_csv_header_naming_two_feature_columns_alike_is_refused(tmp_path):
    # (as BoostClassifier refuses a DataFrame's; the command line trained on it, then could not
    # match a file's columns: "missing [], not in the model []")
    (tmp_path / "a.csv").write_text("a,a,b,label\n1,2,3,0\n4,5,6,1\n")
    with pytest.raises(ValueError, match="a.csv: its header names more than one feature column 'a'"):
        load_data(tmp_path / "a.csv")


def test_a_single_label_libsvm_file_with_a_line_left_unlabelled_is_read_as_multi_label_with_a_warning(tmp_path):
    # an empty label field is an empty label set (the multi-label format): a file without commas is
    # read so only by it, which a single-label file with one label left out also looks like
    (tmp_path / "a.libsvm").write_text("0 1:1\n1 1:2\n 1:3\n2 1:4\n")
    with pytest.warns(UserWarning, match=r"a.libsvm: line 3 has no label .* read as multi-label data"):
        X, Y = load_data(tmp_path / "a.libsvm")
    np.testing.assert_array_equal(Y, [[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (tmp_path / "b.libsvm").write_text("0,2 1:1\n 1:3\n")  # a comma: multi-label as written
        assert load_data(tmp_path / "b.libsvm")[1].shape == (2, 3)
        load_features(tmp_path / "a.libsvm")  # (no labels read)


def test_a_label_column_name_for_a_csv_file_without_a_header(tmp_path):
    (tmp_path / "a.csv").write_text("1,2,0\n3,4,1\n")  # ("(columns: None)" said nothing of why)
    with pytest.raises(ValueError, match=r"a.csv: no column named 'label': the file has no header line of column "
                                         r"names .* index \(0 .. 2, or -1 for the last\)"):
        load_data(tmp_path / "a.csv", label_column="label")


def test_a_query_id_after_the_features_is_named(tmp_path):
    # SVMlight's qid: comes right after the label (read there); after a feature the reader said
    # only "invalid literal for int() with base 10: b'qid'"
    (tmp_path / "a.libsvm").write_text("1 qid:3 1:0.5\n0 qid:3 1:0.2\n")
    np.testing.assert_array_equal(load_data(tmp_path / "a.libsvm")[0], [[0.5], [0.2]])
    (tmp_path / "b.libsvm").write_text("1 qid:3 1:0.5\n0 1:0.2 qid:3\n")
    with pytest.raises(ValueError, match="b.libsvm, line 2: 'qid:3' follows a feature"):
        load_data(tmp_path / "b.libsvm")
