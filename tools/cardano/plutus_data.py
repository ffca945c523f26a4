"""Plutus Data values as the emulator builds them (datums, redeemers, script parameters): their
CBOR encoding in the shape the Cardano serialisation libraries write (non-empty lists and
constructor fields as indefinite-length arrays, byte strings over 64 bytes in 64-byte chunks),
their decoding, and Blockfrost's "detailed schema" JSON of a datum (`/scripts/datum/{hash}`).

Values: int, bytes, list, Constr(index, fields), PlutusMap(pairs)."""

from dataclasses import dataclass, field

import cbor2


@dataclass(frozen=True)
class Constr:
    index: int
    fields: tuple = field(default_factory=tuple)


@dataclass(frozen=True)
class PlutusMap:
    pairs: tuple


def constr(index: int, *fields) -> Constr:
    return Constr(index, tuple(fields))


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([(major << 5) | value])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if value < 1 << (8 * size):
            return bytes([(major << 5) | extra]) + value.to_bytes(size, "big")
    raise ValueError("CBOR head too large")


def _encode(value, out: bytearray) -> None:
    if isinstance(value, bool):
        raise TypeError("Plutus Data has no booleans; use Constr(0|1)")
    if isinstance(value, int):
        if 0 <= value < 1 << 64:
            out += _head(0, value)
        elif -(1 << 64) <= value < 0:
            out += _head(1, -1 - value)
        else:
            out += cbor2.dumps(value)  # bignum tags 2/3
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        if len(data) <= 64:
            out += _head(2, len(data)) + data
        else:
            out.append(0x5F)
            for start in range(0, len(data), 64):
                chunk = data[start:start + 64]
                out += _head(2, len(chunk)) + chunk
            out.append(0xFF)
    elif isinstance(value, (list, tuple)):
        _encode_list(value, out)
    elif isinstance(value, Constr):
        if value.index < 7:
            out += _head(6, 121 + value.index)
        elif value.index < 128:
            out += _head(6, 1280 + value.index - 7)
        else:
            out += _head(6, 102) + _head(4, 2) + _head(0, value.index)
        _encode_list(value.fields, out)
    elif isinstance(value, PlutusMap):
        out += _head(5, len(value.pairs))
        for key, item in value.pairs:
            _encode(key, out)
            _encode(item, out)
    else:
        raise TypeError(f"not Plutus Data: {value!r}")


def _encode_list(items, out: bytearray) -> None:
    if not items:
        out.append(0x80)
        return
    out.append(0x9F)
    for item in items:
        _encode(item, out)
    out.append(0xFF)


def to_cbor(value) -> bytes:
    out = bytearray()
    _encode(value, out)
    return bytes(out)


def _from_primitive(value):
    if isinstance(value, cbor2.CBORTag):
        tag = value.tag
        if 121 <= tag <= 127:
            return Constr(tag - 121, tuple(_from_primitive(v) for v in value.value))
        if 1280 <= tag <= 1400:
            return Constr(tag - 1280 + 7, tuple(_from_primitive(v) for v in value.value))
        if tag == 102:
            index, fields = value.value
            return Constr(index, tuple(_from_primitive(v) for v in fields))
        if tag in (2, 3):
            magnitude = int.from_bytes(value.value, "big")
            return magnitude if tag == 2 else -1 - magnitude
        raise ValueError(f"unexpected CBOR tag {tag} in Plutus Data")
    if isinstance(value, list):
        return [_from_primitive(v) for v in value]
    if isinstance(value, dict):
        return PlutusMap(tuple((_from_primitive(k), _from_primitive(v)) for k, v in value.items()))
    if isinstance(value, (int, bytes)):
        return value
    raise ValueError(f"not Plutus Data: {value!r}")


def from_cbor(data: bytes):
    return _from_primitive(cbor2.loads(data))


def to_detailed_json(value):
    """Blockfrost's (cardano-cli's) detailed-schema JSON of a Plutus Data value."""
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, list):
        return {"list": [to_detailed_json(v) for v in value]}
    if isinstance(value, Constr):
        return {"constructor": value.index, "fields": [to_detailed_json(v) for v in value.fields]}
    return {"map": [{"k": to_detailed_json(k), "v": to_detailed_json(v)} for k, v in value.pairs]}


def some(value) -> Constr:
    return constr(0, value)


NONE = constr(1)


def address_data(payment_key_hash: bytes, stake_key_hash: bytes | None) -> Constr:
    """A Plutus `Address` with a verification-key payment credential and an optional inline
    verification-key stake credential, as Mesh's `mPubKeyAddress` builds it."""
    stake = NONE if stake_key_hash is None else some(constr(0, constr(0, stake_key_hash)))
    return constr(0, constr(0, payment_key_hash), stake)


def output_reference_data(tx_id: bytes, index: int) -> Constr:
    """A Plutus V3 `OutputReference` (transaction_id, output_index)."""
    return constr(0, tx_id, index)
