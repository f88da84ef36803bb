"""Product catalog: loading, lookup, search and paging."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

PAGE_SIZE = 4


@dataclass(frozen=True)
class Product:
    """A sellable item.  ``price`` is the unit price in dollars."""

    sku: str
    name: str
    category: str
    price: Decimal


class UnknownProductError(KeyError):
    """Raised when a SKU is not in the catalog."""


class Catalog:
    """An in-memory collection of products keyed by SKU.

    Listings (:meth:`sorted`, :meth:`search`, :meth:`page`) are always
    ordered by product name, case-insensitively.
    """

    def __init__(self, products: Iterable[Product] = ()) -> None:
        self._products: dict[str, Product] = {}
        for product in products:
            self.add(product)

    def __len__(self) -> int:
        return len(self._products)

    def __contains__(self, sku: object) -> bool:
        return sku in self._products

    def add(self, product: Product) -> None:
        """Add a product; SKUs must be unique and prices non-negative."""
        if product.sku in self._products:
            raise ValueError(f"duplicate SKU {product.sku!r}")
        if product.price < 0:
            raise ValueError(f"negative price for {product.sku!r}")
        self._products[product.sku] = product

    def get(self, sku: str) -> Product:
        """Return the product with this SKU or raise UnknownProductError."""
        try:
            return self._products[sku]
        except KeyError:
            raise UnknownProductError(sku) from None

    def sorted(self) -> list[Product]:
        """All products ordered by name."""
        return sorted(self._products.values(), key=lambda p: p.name.casefold())

    def search(self, text: str, category: str | None = None) -> list[Product]:
        """Products whose name contains ``text`` (case-insensitive)."""
        needle = text.casefold()
        return [
            product
            for product in self.sorted()
            if needle in product.name.casefold()
            and (category is None or product.category == category)
        ]

    def page_count(self, size: int = PAGE_SIZE) -> int:
        """How many pages of ``size`` products the catalog fills."""
        if size < 1:
            raise ValueError("page size must be at least 1")
        return -(-len(self._products) // size)

    def page(self, number: int, size: int = PAGE_SIZE) -> list[Product]:
        """Return page ``number`` (1-based) of the name-sorted listing."""
        if not 1 <= number <= max(self.page_count(size), 1):
            raise ValueError(f"page {number} is out of range")
        start = (number - 1) * size
        return self.sorted()[start : start + size]

    def pages(self, size: int = PAGE_SIZE) -> Iterator[tuple[int, list[Product]]]:
        """Yield ``(number, products)`` for each page, first page first."""
        for number in range(1, self.page_count(size)):
            yield number, self.page(number, size)


def load_products_csv(source: str | Path) -> tuple[Catalog, dict[str, int]]:
    """Read products from a CSV file (or CSV text).

    The CSV needs the columns ``sku, name, category, price, stock``.
    Returns the catalog and a ``{sku: stock}`` mapping suitable for
    :class:`shopcart.inventory.Inventory`.
    """
    if isinstance(source, Path):
        text = source.read_text(encoding="utf-8")
    else:
        text = source
    catalog = Catalog()
    stock: dict[str, int] = {}
    reader = csv.DictReader(io.StringIO(text))
    for row_number, row in enumerate(reader, start=2):
        try:
            product = Product(
                sku=row["sku"].strip(),
                name=row["name"].strip(),
                category=row["category"].strip(),
                price=Decimal(row["price"]),
            )
            level = int(row["stock"])
        except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
            raise ValueError(f"bad product row {row_number}: {row!r}") from exc
        catalog.add(product)
        stock[product.sku] = level
    return catalog, stock
