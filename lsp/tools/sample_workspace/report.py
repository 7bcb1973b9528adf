"""Monthly report."""


def summarise(rows)
    return {"rows": len(rows), "café": sum(r.get("amount", 0) for r in rows)}
