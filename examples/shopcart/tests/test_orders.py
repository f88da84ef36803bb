from decimal import Decimal

from shopcart import Cart, Customer, Inventory, Order, Product, process_batch

LAMP = Product("LAMP", "Desk Lamp", "home", Decimal("30.00"))
BULB = Product("BULB", "LED Bulb", "home", Decimal("5.00"))


def make_order(order_id, name, *lines):
    cart = Cart(Customer(name))
    for product, quantity in lines:
        cart.add(product, quantity)
    return Order(order_id, cart)


def test_batch_confirms_orders_that_are_in_stock():
    inventory = Inventory({"LAMP": 5, "BULB": 20})
    orders = [
        make_order("1", "Ann", (LAMP, 2), (BULB, 4)),
        make_order("2", "Ben", (BULB, 6)),
    ]
    results = process_batch(orders, inventory)
    assert [r.status for r in results] == ["confirmed", "confirmed"]
    assert results[1].quote.total == Decimal("38.35")
    assert inventory.available("LAMP") == 3
    assert inventory.available("BULB") == 10


def test_order_that_cannot_be_filled_puts_its_stock_back():
    inventory = Inventory({"LAMP": 1, "BULB": 20})
    orders = [make_order("1", "Ann", (BULB, 4), (LAMP, 2))]
    results = process_batch(orders, inventory)
    assert results[0].status == "backordered"
    assert results[0].missing_sku == "LAMP"
    assert inventory.available("BULB") == 20


def test_batch_backorders_when_stock_runs_out():
    inventory = Inventory({"LAMP": 3, "BULB": 20})
    orders = [
        make_order("1", "Ann", (LAMP, 1)),
        make_order("2", "Ben", (LAMP, 2), (BULB, 2)),
        make_order("3", "Cy", (BULB, 1), (LAMP, 1)),
        make_order("4", "Di", (BULB, 3)),
    ]
    results = process_batch(orders, inventory)
    assert [r.status for r in results] == ["confirmed", "confirmed", "backordered", "confirmed"]
    assert results[2].missing_sku == "LAMP"
    assert inventory.available("BULB") == 15
