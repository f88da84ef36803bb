"""Stock levels and reservations."""

from __future__ import annotations

from collections.abc import Mapping


class OutOfStockError(Exception):
    """Raised when an order asks for more units than are on hand."""

    def __init__(self, sku: str, requested: int, available: int) -> None:
        super().__init__(f"{sku}: requested {requested}, only {available} available")
        self.sku = sku
        self.requested = requested
        self.available = available


class Inventory:
    """On-hand stock per SKU.

    Only SKUs that actually have units on hand are kept in the table, so
    :meth:`in_stock` is simply the list of known SKUs.
    """

    def __init__(self, levels: Mapping[str, int] | None = None) -> None:
        self._stock: dict[str, int] = {}
        for sku, quantity in (levels or {}).items():
            self.restock(sku, quantity)

    def available(self, sku: str) -> int:
        """Units of ``sku`` on hand (0 for unknown SKUs)."""
        return self._stock.get(sku, 0)

    def in_stock(self) -> list[str]:
        """SKUs with at least one unit on hand, sorted."""
        return sorted(self._stock)

    def low_stock(self, threshold: int = 5) -> list[tuple[str, int]]:
        """``(sku, units)`` pairs at or below ``threshold``, scarcest first."""
        low = [(sku, units) for sku, units in self._stock.items() if units <= threshold]
        return sorted(low, key=lambda item: (item[1], item[0]))

    def restock(self, sku: str, quantity: int) -> None:
        """Add ``quantity`` units of ``sku``."""
        if quantity < 0:
            raise ValueError("cannot restock a negative quantity")
        self._set(sku, self.available(sku) + quantity)

    def reserve(self, sku: str, quantity: int) -> None:
        """Take ``quantity`` units of ``sku`` out of stock for an order.

        Raises OutOfStockError if there are not enough units on hand.
        """
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        on_hand = self._stock[sku]
        if quantity > on_hand:
            raise OutOfStockError(sku, quantity, on_hand)
        self._set(sku, on_hand - quantity)

    def release(self, sku: str, quantity: int) -> None:
        """Put previously reserved units back on the shelf."""
        self.restock(sku, quantity)

    def _set(self, sku: str, level: int) -> None:
        if level > 0:
            self._stock[sku] = level
        else:
            self._stock.pop(sku, None)
