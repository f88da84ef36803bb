"""Discounts, vouchers, shipping and tax.

Pricing rules, in the order they are applied:

1. Volume discounts per line.  Any customer buying ``BULK_MIN_QTY`` or
   more units of one product gets ``BULK_RATE`` off that line; business
   customers buying ``WHOLESALE_MIN_QTY`` or more get ``WHOLESALE_RATE``.
2. Voucher codes.  Percentage vouchers do not stack: the best one wins.
3. Shipping is free from ``FREE_SHIPPING_FROM`` (after discounts) or with
   a free-shipping voucher, otherwise a flat ``SHIPPING_FEE``.
4. Sales tax of ``TAX_RATE`` on the discounted goods (not on shipping).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cart import Cart, Customer

CENT = Decimal("0.01")
ZERO = Decimal("0.00")

BULK_MIN_QTY = 10
BULK_RATE = Decimal("0.05")
WHOLESALE_MIN_QTY = 50
WHOLESALE_RATE = Decimal("0.12")

FREE_SHIPPING_FROM = Decimal("50.00")
SHIPPING_FEE = Decimal("5.95")
TAX_RATE = Decimal("0.08")


@dataclass(frozen=True)
class Voucher:
    """A promotional code a customer can enter at checkout."""

    code: str
    description: str
    percent_off: Decimal = ZERO
    free_shipping: bool = False


VOUCHERS: dict[str, Voucher] = {
    voucher.code: voucher
    for voucher in (
        Voucher("SAVE10", "10% off your order", percent_off=Decimal("0.10")),
        Voucher("WELCOME15", "15% off your first order", percent_off=Decimal("0.15")),
        Voucher("SHIPFREE", "Free shipping", free_shipping=True),
    )
}


@dataclass(frozen=True)
class Quote:
    """The full price breakdown of a cart.  All amounts are in dollars."""

    subtotal: Decimal
    line_discount: Decimal
    voucher_discount: Decimal
    shipping: Decimal
    tax: Decimal
    total: Decimal
    vouchers: tuple[str, ...] = ()

    @property
    def savings(self) -> Decimal:
        return self.line_discount + self.voucher_discount


def money(amount: Decimal) -> Decimal:
    """Round to whole cents, halves away from zero."""
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


def line_discount_rate(quantity: int, customer: Customer) -> Decimal:
    """Volume discount rate for a line of ``quantity`` units."""
    if quantity >= BULK_MIN_QTY:
        return BULK_RATE
    elif customer.business and quantity >= WHOLESALE_MIN_QTY:
        return WHOLESALE_RATE
    return ZERO


def best_percent_off(codes: list[str]) -> Decimal:
    """The largest percentage among the given voucher codes."""
    return max((VOUCHERS[code].percent_off for code in codes), default=ZERO)


def quote(cart: Cart) -> Quote:
    """Price a cart according to the rules in the module docstring."""
    lines = cart.lines
    subtotal = money(sum((line.amount for line in lines), ZERO))
    line_discount = sum(
        (money(line.amount * line_discount_rate(line.quantity, cart.customer)) for line in lines),
        ZERO,
    )
    goods = subtotal - line_discount
    voucher_discount = money(goods * best_percent_off(cart.vouchers))
    goods -= voucher_discount

    free_shipping = any(VOUCHERS[code].free_shipping for code in cart.vouchers)
    if not lines or free_shipping or goods >= FREE_SHIPPING_FROM:
        shipping = ZERO
    else:
        shipping = SHIPPING_FEE

    tax = money(goods * TAX_RATE)
    return Quote(
        subtotal=subtotal,
        line_discount=line_discount,
        voucher_discount=voucher_discount,
        shipping=shipping,
        tax=tax,
        total=goods + shipping + tax,
        vouchers=tuple(cart.vouchers),
    )
