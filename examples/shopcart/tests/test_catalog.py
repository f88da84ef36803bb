from decimal import Decimal

import pytest

from shopcart import Catalog, Product, UnknownProductError, load_products_csv

CSV = """sku,name,category,price,stock
P1,Pencil,stationery,0.80,100
P2,apron,kitchen,19.99,4
P3,Lamp,home,35.00,2
P4,Kettle,kitchen,42.50,6
P5,Mat,home,12.00,9
P6,Bowl,kitchen,7.25,30
P7,Frame,home,15.00,5
"""


@pytest.fixture
def catalog():
    catalog, _stock = load_products_csv(CSV)
    return catalog


def test_load_products_csv_reads_prices_and_stock():
    catalog, stock = load_products_csv(CSV)
    assert len(catalog) == 7
    assert catalog.get("P2").price == Decimal("19.99")
    assert stock["P3"] == 2


def test_get_unknown_sku_raises(catalog):
    with pytest.raises(UnknownProductError):
        catalog.get("NOPE")


def test_listing_is_sorted_by_name_case_insensitively(catalog):
    names = [product.name for product in catalog.sorted()]
    assert names == ["apron", "Bowl", "Frame", "Kettle", "Lamp", "Mat", "Pencil"]
    assert [p.name for p in catalog.search("l", category="home")] == ["Lamp"]


def test_page_returns_slices_of_the_listing(catalog):
    assert catalog.page_count(3) == 3
    assert [p.sku for p in catalog.page(1, 3)] == ["P2", "P6", "P7"]
    assert [p.sku for p in catalog.page(3, 3)] == ["P1"]
    with pytest.raises(ValueError):
        catalog.page(4, 3)


def test_pages_cover_every_product_exactly_once(catalog):
    seen = [product.sku for _number, products in catalog.pages(3) for product in products]
    assert sorted(seen) == sorted(p.sku for p in catalog.sorted())


def test_duplicate_sku_is_rejected():
    catalog = Catalog([Product("X", "Thing", "misc", Decimal("1.00"))])
    with pytest.raises(ValueError):
        catalog.add(Product("X", "Other thing", "misc", Decimal("2.00")))
