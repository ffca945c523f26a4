"""Multi-asset values as plain dicts {unit: quantity} (unit "lovelace" or policy id hex ++ asset
name hex, as Blockfrost spells them), their arithmetic, and their conversion to pycardano's
`Value` and to Blockfrost's `amount` lists (lovelace first)."""

from pycardano import Asset, AssetName, MultiAsset, ScriptHash, Value

LOVELACE = "lovelace"


def add(*values: dict) -> dict:
    total: dict = {}
    for value in values:
        for unit, quantity in value.items():
            total[unit] = total.get(unit, 0) + quantity
    return {unit: q for unit, q in total.items() if q != 0}


def subtract(left: dict, right: dict) -> dict:
    return add(left, {unit: -q for unit, q in right.items()})


def covers(have: dict, need: dict) -> bool:
    return all(have.get(unit, 0) >= q for unit, q in need.items() if q > 0)


def multi_asset(value: dict) -> MultiAsset | None:
    tokens = {unit: q for unit, q in value.items() if unit != LOVELACE}
    if not tokens:
        return None
    policies: dict = {}
    for unit in sorted(tokens):
        policies.setdefault(unit[:56], {})[unit[56:]] = tokens[unit]
    return MultiAsset(
        {
            ScriptHash(bytes.fromhex(policy)): Asset({AssetName(bytes.fromhex(name)): q for name, q in names.items()})
            for policy, names in policies.items()
        }
    )


def to_pycardano(value: dict) -> Value | int:
    coin = value.get(LOVELACE, 0)
    tokens = multi_asset(value)
    return Value(coin, tokens) if tokens else coin


def from_pycardano(amount) -> dict:
    if isinstance(amount, int):
        return {LOVELACE: amount}
    value = {LOVELACE: amount.coin}
    for policy, assets in (amount.multi_asset or {}).items():
        for name, quantity in assets.items():
            value[bytes(policy).hex() + bytes(name.payload).hex()] = quantity
    return value


def blockfrost_amount(value: dict) -> list:
    """Blockfrost's `amount`: lovelace first, then every token in the order given."""
    amount = [{"unit": LOVELACE, "quantity": str(value.get(LOVELACE, 0))}]
    amount += [{"unit": u, "quantity": str(q)} for u, q in value.items() if u != LOVELACE]
    return amount
