def word_counts(text):
    """How many times each word occurs in text, ignoring case."""
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0)
    return counts
