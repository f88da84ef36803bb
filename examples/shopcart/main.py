"""Demo: a morning at the shop.

Loads the product list, shows the catalog page by page, fills a few
customers' carts, previews their checkout totals, then processes the
morning's orders as one batch and prints a sales report.

Run with ``python main.py``.
"""

from __future__ import annotations

from pathlib import Path

from shopcart import (
    Cart,
    Customer,
    Inventory,
    Order,
    format_money,
    format_quote,
    format_result,
    load_products_csv,
    process_batch,
    quote,
    sales_report,
)

DATA_FILE = Path(__file__).resolve().parent / "data" / "products.csv"
RESTOCK_AT = 5


def show_catalog(catalog) -> None:
    total = catalog.page_count()
    print(f"Catalog: {len(catalog)} products")
    for number, products in catalog.pages():
        print(f"-- Page {number} of {total} --")
        for product in products:
            print(f"  {product.sku:<7} {product.name:<22} {format_money(product.price):>8}")
    print()


def fill_carts(catalog) -> list[Order]:
    alice = Cart(Customer("Alice"))
    alice.add(catalog.get("HOO-01"), 2)
    alice.add(catalog.get("MUG-01"))
    alice.apply_voucher("save10")

    bobs_bikes = Cart(Customer("Bob's Bikes", business=True))
    bobs_bikes.add(catalog.get("NTB-01"), 60)
    bobs_bikes.add(catalog.get("PEN-01"), 12)

    carol = Cart(Customer("Carol"))
    carol.add(catalog.get("MUG-01"), 2)
    carol.add(catalog.get("TEE-01"))

    dave = Cart(Customer("Dave"))
    dave.add(catalog.get("STK-01"), 3)
    dave.add(catalog.get("MUG-01"))

    erin = Cart(Customer("Erin"))
    erin.add(catalog.get("BTL-01"))
    erin.add(catalog.get("CAP-01"))

    carts = [alice, bobs_bikes, carol, dave, erin]
    return [Order(str(1001 + index), cart) for index, cart in enumerate(carts)]


def main() -> None:
    catalog, stock = load_products_csv(DATA_FILE)
    inventory = Inventory(stock)
    show_catalog(catalog)

    orders = fill_carts(catalog)
    print("Checkout previews")
    for order in orders:
        print(format_quote(order.cart.customer, quote(order.cart)))
    print()

    print(f"Processing {len(orders)} orders")
    results = process_batch(orders, inventory, on_result=lambda n, r: print(format_result(n, r)))
    print()
    print(sales_report(results))

    running_low = [
        f"{product.sku} ({inventory.available(product.sku)} left)"
        for product in catalog.sorted()
        if inventory.available(product.sku) <= RESTOCK_AT
    ]
    print()
    print(f"Restock soon: {', '.join(running_low) or 'nothing'}")


if __name__ == "__main__":
    main()
