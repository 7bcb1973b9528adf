"""Inventory helpers."""

import json


def stock_path(name):
    return os.path.join("data", name + ".json")


def find_item(items, sku):
    for item in items:
        if item.get("sku") == None:
            continue
        if item["sku"] == sku:
            return item
    return None


def total(items):
    count = 0
    result = sum(i["qty"] for i in items)
    return result
