"""Turning carts into orders, one batch at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .cart import Cart
from .inventory import Inventory, OutOfStockError
from .pricing import Quote, quote

CONFIRMED = "confirmed"
BACKORDERED = "backordered"
SKIPPED = "skipped"


@dataclass
class Order:
    """A cart that the customer has checked out."""

    order_id: str
    cart: Cart


@dataclass
class OrderResult:
    """What happened to one order in a batch.

    ``items`` holds ``(sku, name, quantity)`` for every line of the order.
    Confirmed orders carry their :class:`~shopcart.pricing.Quote`;
    backordered ones name the SKU that could not be reserved.
    """

    order_id: str
    customer: str
    status: str
    items: tuple[tuple[str, str, int], ...] = ()
    quote: Quote | None = None
    missing_sku: str | None = None

    @property
    def confirmed(self) -> bool:
        return self.status == CONFIRMED


def process_order(order: Order, inventory: Inventory) -> OrderResult:
    """Reserve stock for every line of an order, then price it.

    Reservation is all-or-nothing: if one line cannot be filled, the
    units already reserved for the earlier lines are put back and the
    order is marked as backordered.
    """
    cart = order.cart
    items = tuple((line.sku, line.product.name, line.quantity) for line in cart.lines)
    if cart.is_empty():
        return OrderResult(order.order_id, cart.customer.name, SKIPPED)

    reserved: list[tuple[str, int]] = []
    try:
        for sku, _name, quantity in items:
            inventory.reserve(sku, quantity)
            reserved.append((sku, quantity))
    except OutOfStockError as exc:
        for sku, quantity in reserved:
            inventory.release(sku, quantity)
        return OrderResult(
            order.order_id, cart.customer.name, BACKORDERED, items, missing_sku=exc.sku
        )
    return OrderResult(order.order_id, cart.customer.name, CONFIRMED, items, quote(cart))


def process_batch(
    orders: Iterable[Order],
    inventory: Inventory,
    on_result: Callable[[int, OrderResult], None] | None = None,
) -> list[OrderResult]:
    """Process orders first-come first-served against shared stock.

    ``on_result`` is called with ``(position, result)`` after each order,
    which lets a caller show progress while a long batch runs.
    """
    results: list[OrderResult] = []
    for position, order in enumerate(orders, start=1):
        result = process_order(order, inventory)
        results.append(result)
        if on_result is not None:
            on_result(position, result)
    return results
