def reverse_words(sentence):
    """The words of sentence in reverse order, separated by single spaces."""
    words = sentence.split()
    return " ".join(words[:0:-1])
