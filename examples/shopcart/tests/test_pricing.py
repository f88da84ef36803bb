from decimal import Decimal

from shopcart import Cart, Customer, Product, line_discount_rate, quote

RETAIL = Customer("Ann")
TRADE = Customer("Acme Ltd", business=True)
PAD = Product("PAD", "Sketch Pad", "art", Decimal("6.40"))
EASEL = Product("EASEL", "Easel", "art", Decimal("80.00"))


def test_small_orders_pay_full_price_plus_shipping():
    cart = Cart(RETAIL)
    cart.add(PAD, 3)
    q = quote(cart)
    assert (q.subtotal, q.line_discount, q.shipping, q.tax) == (
        Decimal("19.20"),
        Decimal("0.00"),
        Decimal("5.95"),
        Decimal("1.54"),
    )
    assert q.total == Decimal("26.69")


def test_bulk_rate_from_ten_units():
    assert line_discount_rate(9, RETAIL) == Decimal("0")
    assert line_discount_rate(10, RETAIL) == Decimal("0.05")
    assert line_discount_rate(75, RETAIL) == Decimal("0.05")
    assert line_discount_rate(20, TRADE) == Decimal("0.05")


def test_shipping_is_free_from_fifty_dollars():
    cart = Cart(RETAIL)
    cart.add(EASEL)
    q = quote(cart)
    assert q.shipping == Decimal("0.00")
    assert q.total == Decimal("86.40")


def test_business_customers_get_wholesale_rate_on_large_lines():
    cart = Cart(TRADE)
    cart.add(PAD, 60)
    q = quote(cart)
    assert q.subtotal == Decimal("384.00")
    assert q.total == Decimal("364.95")
