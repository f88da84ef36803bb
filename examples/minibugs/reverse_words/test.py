from reverse_words_code import reverse_words


def test_three_words():
    assert reverse_words("one two three") == "three two one"


def test_one_word():
    assert reverse_words("alone") == "alone"
