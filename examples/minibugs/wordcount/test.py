from wordcount_code import word_counts


def test_counts_repeated_words():
    assert word_counts("the cat and The hat") == {"the": 2, "cat": 1, "and": 1, "hat": 1}


def test_empty_text():
    assert word_counts("") == {}
