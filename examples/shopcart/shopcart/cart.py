"""Customers and their shopping carts."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .catalog import Product
from .pricing import VOUCHERS


@dataclass(frozen=True)
class Customer:
    """Someone who shops with us.  Business customers may get trade rates."""

    name: str
    business: bool = False


@dataclass
class CartLine:
    """One product in a cart and how many units of it."""

    product: Product
    quantity: int

    @property
    def sku(self) -> str:
        return self.product.sku

    @property
    def amount(self) -> Decimal:
        """Undiscounted price of the line."""
        return self.product.price * self.quantity


class Cart:
    """A customer's cart: product lines plus any voucher codes entered.

    ``vouchers`` lets a saved basket be restored together with the codes
    that were already attached to it.
    """

    def __init__(self, customer: Customer, vouchers: list[str] = []) -> None:
        self.customer = customer
        self.vouchers = vouchers
        self._lines: dict[str, CartLine] = {}

    def __repr__(self) -> str:
        return f"Cart({self.customer.name!r}, {len(self._lines)} lines)"

    @property
    def lines(self) -> list[CartLine]:
        """Lines in the order their products were first added."""
        return list(self._lines.values())

    def is_empty(self) -> bool:
        return not self._lines

    def item_count(self) -> int:
        """Total number of units across all lines."""
        return sum(line.quantity for line in self._lines.values())

    def subtotal(self) -> Decimal:
        """Sum of all line amounts before any discount."""
        return sum((line.amount for line in self._lines.values()), Decimal("0"))

    def add(self, product: Product, quantity: int = 1) -> CartLine:
        """Add units of a product, merging with an existing line."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        line = self._lines.get(product.sku)
        if line is None:
            line = self._lines[product.sku] = CartLine(product, quantity)
        else:
            line.quantity += quantity
        return line

    def remove(self, sku: str, quantity: int | None = None) -> None:
        """Remove some units of a product, or the whole line."""
        line = self._lines[sku]
        if quantity is None or quantity >= line.quantity:
            del self._lines[sku]
        else:
            line.quantity -= quantity

    def apply_voucher(self, code: str) -> None:
        """Attach a voucher code.  Unknown codes raise ValueError."""
        normalized = code.strip().upper()
        if normalized not in VOUCHERS:
            raise ValueError(f"unknown voucher code {code!r}")
        if normalized not in self.vouchers:
            self.vouchers.append(normalized)
