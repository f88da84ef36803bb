from decimal import Decimal

from shopcart import Cart, Customer, Inventory, Order, Product, format_quote, process_batch, quote
from shopcart import sales_report

MAP = Product("MAP", "Trail Map", "outdoor", Decimal("8.00"))
TENT = Product("TENT", "Two-person Tent", "outdoor", Decimal("120.00"))


def test_quote_preview_shows_total():
    cart = Cart(Customer("Ann"))
    cart.add(MAP, 2)
    text = format_quote(cart.customer, quote(cart))
    assert "Ann (retail)" in text
    assert "$23.23" in text


def test_sales_report_counts_and_revenue():
    inventory = Inventory({"MAP": 10, "TENT": 1})
    carts = [Cart(Customer(name)) for name in ("Ann", "Ben")]
    carts[0].add(TENT)
    carts[1].add(MAP, 3)
    results = process_batch([Order(str(i), c) for i, c in enumerate(carts)], inventory)
    report = sales_report(results)
    assert "Orders confirmed:   2" in report
    assert "$161.47" in report
    assert "3 x Trail Map" in report
