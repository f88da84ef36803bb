from fib_code import fib


def test_first_numbers():
    assert [fib(n) for n in range(7)] == [0, 1, 1, 2, 3, 5, 8]
