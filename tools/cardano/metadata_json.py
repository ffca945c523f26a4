"""Transaction metadata: plain JSON from the control API turned into ledger metadata (strings
longer than Masumi's 60-byte chunk split into lists of chunks on character boundaries, as the
Masumi payment service's `stringToMetadata` does; the ledger's own limit is 64 bytes), ledger
metadata rendered back as Blockfrost's `json_metadata`, and an asset's CIP-25 entry with the
standard Blockfrost would report for it."""

CHUNK_BYTES = 60
LEDGER_STRING_LIMIT = 64


def chunk_string(text: str) -> str | list:
    if len(text.encode("utf-8")) <= CHUNK_BYTES:
        return text
    chunks, current, size = [], "", 0
    for char in text:
        width = len(char.encode("utf-8"))
        if size + width > CHUNK_BYTES and current:
            chunks.append(current)
            current, size = "", 0
        current += char
        size += width
    if current:
        chunks.append(current)
    return chunks


def chunk_long_strings(value):
    """JSON -> ledger metadatum: long strings chunked, booleans and nulls as strings, floats
    refused (the ledger has no such metadatum)."""
    if isinstance(value, str):
        return chunk_string(value)
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "null"
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        raise ValueError("metadata cannot hold a non-integer number")
    if isinstance(value, list):
        return [chunk_long_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: chunk_long_strings(v) for k, v in value.items()}
    raise ValueError(f"metadata cannot hold {type(value).__name__}")


def check_ledger_limits(value, path: str = "") -> None:
    if isinstance(value, str) and len(value.encode("utf-8")) > LEDGER_STRING_LIMIT:
        raise ValueError(f"metadata string at {path or '/'} is over the ledger's 64 bytes")
    if isinstance(value, bytes) and len(value) > LEDGER_STRING_LIMIT:
        raise ValueError(f"metadata bytes at {path or '/'} are over the ledger's 64 bytes")
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_ledger_limits(item, f"{path}/{i}")
    if isinstance(value, dict):
        for key, item in value.items():
            check_ledger_limits(key, f"{path}/{key}")
            check_ledger_limits(item, f"{path}/{key}")


def to_blockfrost_json(value):
    """A ledger metadatum as db-sync/Blockfrost render it: byte strings as "0x…", map keys as
    strings."""
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, list):
        return [to_blockfrost_json(v) for v in value]
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else str(to_blockfrost_json(k))): to_blockfrost_json(v) for k, v in value.items()}
    return value


def cip25_entry(label_721, policy_hex: str, name_hex: str):
    """The CIP-25 object for one asset in a 721 metadatum: looked up under the hex asset name
    (CIP-25 v2, and Masumi's registry even under version "1"), else under its UTF-8 name."""
    if not isinstance(label_721, dict):
        return None
    policy_map = label_721.get(policy_hex)
    if not isinstance(policy_map, dict):
        return None
    if name_hex in policy_map:
        return policy_map[name_hex]
    try:
        return policy_map.get(bytes.fromhex(name_hex).decode("utf-8"))
    except UnicodeDecodeError:
        return None


def cip25_standard(label_721, entry) -> str | None:
    """"CIP25v1"/"CIP25v2" when the entry has CIP-25's required fields (name a string, image a
    string or a list of strings), else None — as Blockfrost's best-effort check reports it."""
    if not isinstance(entry, dict):
        return None
    image = entry.get("image")
    image_ok = isinstance(image, str) or (isinstance(image, list) and image and all(isinstance(i, str) for i in image))
    if not isinstance(entry.get("name"), str) or not image_ok:
        return None
    version = label_721.get("version") if isinstance(label_721, dict) else None
    return "CIP25v2" if str(version) == "2" else "CIP25v1"
