from decimal import Decimal

from shopcart import Cart, Customer, Product, quote

HOODIE = Product("HOOD", "Hoodie", "apparel", Decimal("48.00"))
CAP = Product("CAP", "Cap", "apparel", Decimal("12.00"))


def test_save10_takes_ten_percent_off():
    cart = Cart(Customer("Ann"))
    cart.add(HOODIE, 2)
    cart.apply_voucher(" save10 ")
    q = quote(cart)
    assert q.vouchers == ("SAVE10",)
    assert q.voucher_discount == Decimal("9.60")
    assert q.total == Decimal("93.31")


def test_vouchers_stay_with_the_cart_they_were_entered_in():
    first = Cart(Customer("Ann"))
    first.apply_voucher("WELCOME15")
    second = Cart(Customer("Ben"))
    assert second.vouchers == []
    assert first.vouchers == ["WELCOME15"]


def test_plain_cart_after_a_voucher_checkout_pays_full_price():
    first = Cart(Customer("Ann"))
    first.add(HOODIE)
    first.apply_voucher("SHIPFREE")
    quote(first)
    second = Cart(Customer("Ben"))
    second.add(CAP, 3)
    q = quote(second)
    assert q.shipping == Decimal("5.95")
    assert q.total == Decimal("44.83")
