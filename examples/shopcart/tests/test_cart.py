from decimal import Decimal

import pytest

from shopcart import Cart, Customer, Product

TEA = Product("TEA", "Green Tea", "pantry", Decimal("3.50"))
JAM = Product("JAM", "Plum Jam", "pantry", Decimal("4.25"))


def test_adding_the_same_product_merges_lines():
    cart = Cart(Customer("Ann"))
    cart.add(TEA, 2)
    cart.add(JAM)
    cart.add(TEA, 3)
    assert [(line.sku, line.quantity) for line in cart.lines] == [("TEA", 5), ("JAM", 1)]
    assert cart.item_count() == 6
    assert cart.subtotal() == Decimal("21.75")


def test_remove_some_or_all_units():
    cart = Cart(Customer("Ann"))
    cart.add(TEA, 4)
    cart.add(JAM, 2)
    cart.remove("TEA", 1)
    cart.remove("JAM")
    assert [(line.sku, line.quantity) for line in cart.lines] == [("TEA", 3)]
    with pytest.raises(ValueError):
        cart.add(JAM, 0)


def test_unknown_voucher_is_rejected():
    cart = Cart(Customer("Ann"))
    with pytest.raises(ValueError):
        cart.apply_voucher("FREEMONEY")
    assert cart.vouchers == []
