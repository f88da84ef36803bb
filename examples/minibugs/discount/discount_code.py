def price_after_discount(price, percent):
    """The price with a discount of `percent` per cent taken off, rounded to cents."""
    return round(price - price * percent, 2)
