import pytest

from shopcart import Inventory, OutOfStockError


def test_reserve_and_release_adjust_stock():
    inventory = Inventory({"A": 5, "B": 2})
    inventory.reserve("A", 3)
    inventory.release("A", 1)
    assert inventory.available("A") == 3
    assert inventory.in_stock() == ["A", "B"]
    assert inventory.low_stock(3) == [("B", 2), ("A", 3)]


def test_reserving_more_than_on_hand_raises():
    inventory = Inventory({"A": 2})
    with pytest.raises(OutOfStockError) as info:
        inventory.reserve("A", 3)
    assert (info.value.sku, info.value.available) == ("A", 2)
    assert inventory.available("A") == 2
