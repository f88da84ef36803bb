"""shopcart: a tiny web-shop back office.

The package is split into small modules:

* :mod:`shopcart.catalog` -- products, lookup, search and paging
* :mod:`shopcart.inventory` -- stock levels and reservations
* :mod:`shopcart.cart` -- customers and their shopping carts
* :mod:`shopcart.pricing` -- discounts, vouchers, shipping and tax
* :mod:`shopcart.orders` -- turning carts into orders, one batch at a time
* :mod:`shopcart.report` -- human-readable quotes and sales reports
"""

from .cart import Cart, CartLine, Customer
from .catalog import Catalog, Product, UnknownProductError, load_products_csv
from .inventory import Inventory, OutOfStockError
from .orders import Order, OrderResult, process_batch, process_order
from .pricing import VOUCHERS, Quote, Voucher, line_discount_rate, quote
from .report import format_money, format_quote, format_result, sales_report

__version__ = "0.3.1"

__all__ = [
    "Cart",
    "CartLine",
    "Catalog",
    "Customer",
    "Inventory",
    "Order",
    "OrderResult",
    "OutOfStockError",
    "Product",
    "Quote",
    "UnknownProductError",
    "VOUCHERS",
    "Voucher",
    "format_money",
    "format_quote",
    "format_result",
    "line_discount_rate",
    "load_products_csv",
    "process_batch",
    "process_order",
    "quote",
    "sales_report",
]
