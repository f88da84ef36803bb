"""Human-readable quotes, progress lines and sales reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from decimal import Decimal

from .cart import Customer
from .orders import BACKORDERED, OrderResult
from .pricing import VOUCHERS, Quote, money

WIDTH = 36


def format_money(amount: Decimal) -> str:
    """``Decimal("1234.5")`` -> ``"$1,234.50"``."""
    return f"${money(amount):,.2f}"


def _row(label: str, amount: Decimal, sign: str = "") -> str:
    value = sign + format_money(amount)
    return f"  {label:<{WIDTH - 14}}{value:>12}"


def format_quote(customer: Customer, quote: Quote) -> str:
    """A checkout preview for one customer."""
    kind = "business" if customer.business else "retail"
    rows = [f"{customer.name} ({kind})", _row("Subtotal", quote.subtotal)]
    if quote.line_discount:
        rows.append(_row("Volume discount", quote.line_discount, "-"))
    for code in quote.vouchers:
        rows.append(f"  Voucher {code}: {VOUCHERS[code].description}")
    if quote.voucher_discount:
        rows.append(_row("Voucher discount", quote.voucher_discount, "-"))
    rows.append(_row("Shipping", quote.shipping))
    rows.append(_row("Tax", quote.tax))
    rows.append(_row("Total", quote.total))
    return "\n".join(rows)


def format_result(position: int, result: OrderResult) -> str:
    """One progress line for a processed order."""
    line = f"[{position}] #{result.order_id} {result.customer:<12} {result.status:<11}"
    if result.quote is not None:
        line += f" {format_money(result.quote.total):>10}"
    elif result.status == BACKORDERED:
        line += f" waiting for {result.missing_sku}"
    return line


def sales_report(results: Sequence[OrderResult], top: int = 3) -> str:
    """Summarize a processed batch: counts, revenue and best sellers."""
    confirmed = [result for result in results if result.confirmed]
    backordered = [result for result in results if result.status == BACKORDERED]
    revenue = sum((result.quote.total for result in confirmed if result.quote), Decimal("0"))
    average = revenue / len(confirmed) if confirmed else Decimal("0")

    units: Counter[str] = Counter()
    for result in confirmed:
        for _sku, name, quantity in result.items:
            units[name] += quantity

    rows = [
        "Sales report",
        "=" * WIDTH,
        f"  Orders confirmed:   {len(confirmed)}",
        f"  Orders backordered: {len(backordered)}",
        _row("Revenue", revenue),
        _row("Average order", average),
        "",
        "Top sellers:",
    ]
    for name, count in units.most_common(top):
        rows.append(f"  {count:>4} x {name}")
    if backordered:
        rows.append("")
        rows.append("Backordered:")
        for result in backordered:
            rows.append(f"  #{result.order_id} {result.customer} (needs {result.missing_sku})")
    return "\n".join(rows)
