from average_code import average


def test_average_of_three():
    assert average([2, 4, 6]) == 4


def test_average_of_one():
    assert average([5]) == 5
