from discount_code import price_after_discount


def test_ten_percent_off():
    assert price_after_discount(200.0, 10) == 180.0


def test_no_discount():
    assert price_after_discount(99.99, 0) == 99.99
