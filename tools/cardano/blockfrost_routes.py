"""Blockfrost's HTTP API over the emulated chain: the route table (paths as the OpenAPI spec
names them, also under /api/v0), path and query parameter checks, paging (count 1..100,
page >= 1, order asc|desc), `from`/`to` ("height" or "height:index", inclusive) on an address's
transactions, and Blockfrost's error bodies."""

import re
import time

import blockfrost_views as views

ERRORS = {
    400: ("Bad Request", "Backend did not understand your request."),
    402: ("Payment Required", "Project has exceeded its daily request limit."),
    403: ("Forbidden", "Invalid project token."),
    404: ("Not Found", "The requested component has not been found."),
    418: ("Requested Banned", "IP has been auto-banned for flooding."),
    425: ("Mempool Full", "Mempool is full, please try resubmitting again later."),
    429: ("Project Over Limit", "Usage is over limit."),
    500: ("Internal Server Error", "An unexpected response was received from the backend."),
    503: ("Service Unavailable", "The service is temporarily unavailable."),
}


class ApiError(Exception):
    def __init__(self, status: int, message: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message or ERRORS[status][1]


def error_body(status: int, message: str | None = None) -> dict:
    return {"status_code": status, "error": ERRORS.get(status, ("Error",))[0], "message": message or ERRORS[status][1]}


HEX64 = r"[0-9a-fA-F]{64}"
ROUTES = []  # [(compiled regex, template, handler)]


def route(template: str):
    pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template)

    def register(handler):
        ROUTES.append((re.compile(f"^{pattern}$"), template, handler))
        return handler

    return register


def match(path: str):
    if path.startswith("/api/v0/") or path == "/api/v0":
        path = path[len("/api/v0"):] or "/"
    for regex, template, handler in ROUTES:
        found = regex.match(path)
        if found:
            return template, handler, found.groupdict()
    return None, None, None


def paging(query: dict) -> tuple:
    def integer(name, default, low, high):
        raw = query.get(name)
        if raw is None:
            return default
        if not re.fullmatch(r"\d+", raw) or not low <= int(raw) <= high:
            raise ApiError(400, f"querystring/{name} must be an integer between {low} and {high}")
        return int(raw)

    count = integer("count", 100, 1, 100)
    page = integer("page", 1, 1, 21474836)
    order = query.get("order", "asc")
    if order not in ("asc", "desc"):
        raise ApiError(400, 'querystring/order must be equal to one of the allowed values: "asc", "desc"')
    return count, page, order


def page_of(items: list, query: dict) -> list:
    count, page, order = paging(query)
    if order == "desc":
        items = items[::-1]
    return items[(page - 1) * count: page * count]


def need_hex(value: str, length: int | None, what: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]*", value) or (length is not None and len(value) != length):
        raise ApiError(400, f"Invalid or malformed {what} format.")
    return value.lower()


def tx_of(chain, tx_hash: str):
    need_hex(tx_hash, 64, "transaction hash")
    record = chain.txs.get(tx_hash.lower())
    if record is None or record.block_height is None:
        raise ApiError(404)
    return record


def block_of(chain, hash_or_number: str):
    if re.fullmatch(r"\d+", hash_or_number):
        block = chain.block_at(int(hash_or_number))
    elif re.fullmatch(HEX64, hash_or_number):
        block = chain.block_by_hash.get(hash_or_number.lower())
    else:
        raise ApiError(400, "Missing, out of range or malformed block number or hash.")
    if block is None:
        raise ApiError(404)
    return block


@route("/")
def root(chain, query):
    return {"url": "https://blockfrost.io/", "version": "0.1.93"}


@route("/health")
def health(chain, query):
    return {"is_healthy": True}


@route("/health/clock")
def clock(chain, query):
    return {"server_time": int(time.time() * 1000)}


@route("/blocks/latest")
def latest(chain, query):
    if chain.tip is None:
        raise ApiError(404)
    return views.block_json(chain, chain.tip)


@route("/blocks/{hash_or_number}")
def block(chain, query, hash_or_number):
    return views.block_json(chain, block_of(chain, hash_or_number))


@route("/blocks/{hash_or_number}/txs")
def block_txs(chain, query, hash_or_number):
    return page_of(block_of(chain, hash_or_number).txs, query)


@route("/txs/{hash}")
def tx(chain, query, hash):
    return views.tx_json(chain, tx_of(chain, hash))


@route("/txs/{hash}/utxos")
def tx_utxos(chain, query, hash):
    return views.utxos_json(chain, tx_of(chain, hash))


@route("/txs/{hash}/metadata")
def tx_metadata(chain, query, hash):
    return views.metadata_json_list(tx_of(chain, hash))


@route("/txs/{hash}/redeemers")
def tx_redeemers(chain, query, hash):
    return views.tx_redeemers_json(tx_of(chain, hash))


@route("/txs/{hash}/cbor")
def tx_cbor(chain, query, hash):
    return {"cbor": tx_of(chain, hash).cbor.hex()}


@route("/scripts/{script_hash}/redeemers")
def script_redeemers(chain, query, script_hash):
    script_hash = need_hex(script_hash, 56, "script hash")
    if script_hash not in chain.known_scripts:
        raise ApiError(404)
    entries = chain.script_redeemers.get(script_hash, [])
    return [views.script_redeemer_json(tx_hash, r) for tx_hash, r in page_of(entries, query)]


@route("/scripts/datum/{datum_hash}")
def datum(chain, query, datum_hash):
    entry = chain.datums.get(need_hex(datum_hash, 64, "datum hash"))
    if entry is None:
        raise ApiError(404)
    return views.datum_json(entry[0])


@route("/scripts/datum/{datum_hash}/cbor")
def datum_cbor(chain, query, datum_hash):
    entry = chain.datums.get(need_hex(datum_hash, 64, "datum hash"))
    if entry is None:
        raise ApiError(404)
    return {"cbor": entry[0].hex()}


def _bound(raw: str | None, name: str):
    if raw is None:
        return None
    found = re.fullmatch(r"(\d+)(?::(\d+))?", raw)
    if not found:
        raise ApiError(400, f"querystring/{name} must be a block height, optionally with :index")
    return int(found.group(1)), None if found.group(2) is None else int(found.group(2))


@route("/addresses/{address}/transactions")
def address_transactions(chain, query, address):
    if not re.fullmatch(r"(addr|addr_test)1[02-9ac-hj-np-z]{20,}|[1-9A-HJ-NP-Za-km-z]{20,}", address):
        raise ApiError(400, "Invalid address for this network.")
    paging(query)
    entries = chain.address_txs.get(address, [])
    low, high = _bound(query.get("from"), "from"), _bound(query.get("to"), "to")
    if low or high:
        def inside(entry):
            height, index, _ = entry
            if low and (height < low[0] or (height == low[0] and low[1] is not None and index < low[1])):
                return False
            if high and (height > high[0] or (height == high[0] and high[1] is not None and index > high[1])):
                return False
            return True

        entries = [e for e in entries if inside(e)]
    times = {}
    result = []
    for height, index, tx_hash in page_of(entries, query):
        if height not in times:
            times[height] = chain.block_at(height).time
        result.append({"tx_hash": tx_hash, "tx_index": index, "block_height": height, "block_time": times[height]})
    return result


def _unit(asset: str) -> str:
    unit = need_hex(asset, None, "asset")
    if len(unit) < 56 or len(unit) > 120 or len(unit) % 2:
        raise ApiError(400, "Invalid or malformed asset format.")
    return unit


def _known_asset(chain, asset: str) -> str:
    unit = _unit(asset)
    if unit not in chain.asset_events:
        raise ApiError(404)
    return unit


@route("/assets/{asset}")
def asset(chain, query, asset):
    return views.asset_json(chain, _known_asset(chain, asset))


@route("/assets/{asset}/history")
def asset_history(chain, query, asset):
    return page_of(views.asset_history_json(chain, _known_asset(chain, asset)), query)


@route("/assets/{asset}/addresses")
def asset_addresses(chain, query, asset):
    return page_of(views.asset_addresses_json(chain, _known_asset(chain, asset)), query)


@route("/assets/policy/{policy_id}")
def policy_assets(chain, query, policy_id):
    policy = need_hex(policy_id, 56, "policy id")
    if policy not in chain.policy_assets:
        raise ApiError(404)
    return views.policy_assets_json(chain, page_of(chain.policy_assets[policy], query))


def handle(chain, path: str, query: dict):
    """(status, body, route template or None) for one Blockfrost GET."""
    template, handler, params = match(path)
    if handler is None:
        return 404, error_body(404), None
    try:
        with chain.lock:
            return 200, handler(chain, query, **params), template
    except ApiError as error:
        return error.status, error_body(error.status, error.message), template
