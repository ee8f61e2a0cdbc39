"""The poker-hand generator: the labels follow the rules, the deals are fair."""

import numpy as np
import pytest

from gpuboost.datasets import make_poker_hands, poker_hand_rank


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
