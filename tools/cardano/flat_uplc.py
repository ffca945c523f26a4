"""Untyped Plutus Core programs in the `flat` bit encoding the ledger stores: decoding, encoding,
and applying Plutus Data parameters to a compiled validator (what Aiken's `aiken blueprint apply`
and Mesh's `applyParamsToScript` do), so the emulator can derive real script hashes the way the
Masumi services derive theirs.

Terms are plain tuples:
    ("var", index)  ("delay", t)  ("lam", body)  ("apply", f, x)  ("const", type, value)
    ("force", t)  ("error",)  ("builtin", number)  ("constr", tag, [t...])  ("case", t, [t...])
Constant types are nested tuples: ("integer",) ("bytestring",) ("string",) ("unit",) ("bool",)
("data",) ("list", elem) ("pair", first, second); a "data" value is its CBOR bytes.

A compiled script as a blueprint's `compiledCode` (and as a transaction's witness set carries it)
is the CBOR byte string wrapping the flat program: see `unwrap_cbor` / `wrap_cbor`."""

import cbor2

_TERM_TAGS = ["var", "delay", "lam", "apply", "const", "force", "error", "builtin", "constr", "case"]
_SIMPLE_TYPES = {0: ("integer",), 1: ("bytestring",), 2: ("string",), 3: ("unit",), 4: ("bool",), 8: ("data",)}
_SIMPLE_TAGS = {v[0]: k for k, v in _SIMPLE_TYPES.items()}


class BitReader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0  # in bits

    def bit(self) -> int:
        byte = self.data[self.pos >> 3]
        value = (byte >> (7 - (self.pos & 7))) & 1
        self.pos += 1
        return value

    def bits(self, count: int) -> int:
        value = 0
        for _ in range(count):
            value = (value << 1) | self.bit()
        return value

    def natural(self) -> int:
        value, shift = 0, 0
        while True:
            more = self.bit()
            value |= self.bits(7) << shift
            shift += 7
            if not more:
                return value

    def integer(self) -> int:
        zigzag = self.natural()
        return (zigzag >> 1) ^ -(zigzag & 1)

    def skip_filler(self) -> None:
        while self.bit() == 0:
            pass

    def bytestring(self) -> bytes:
        self.skip_filler()
        out = bytearray()
        while True:
            length = self.data[self.pos >> 3]
            self.pos += 8
            if length == 0:
                return bytes(out)
            start = self.pos >> 3
            out += self.data[start:start + length]
            self.pos += 8 * length


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.current = 0
        self.used = 0

    def bit(self, value: int) -> None:
        self.current = (self.current << 1) | (value & 1)
        self.used += 1
        if self.used == 8:
            self.out.append(self.current)
            self.current, self.used = 0, 0

    def bits(self, value: int, count: int) -> None:
        for shift in range(count - 1, -1, -1):
            self.bit(value >> shift)

    def natural(self, value: int) -> None:
        while True:
            group = value & 0x7F
            value >>= 7
            self.bit(1 if value else 0)
            self.bits(group, 7)
            if not value:
                return

    def integer(self, value: int) -> None:
        self.natural(value * 2 if value >= 0 else -value * 2 - 1)

    def filler(self) -> None:
        while self.used != 7:
            self.bit(0)
        self.bit(1)

    def bytestring(self, data: bytes) -> None:
        self.filler()
        for start in range(0, len(data), 255):
            chunk = data[start:start + 255]
            self.out.append(len(chunk))
            self.out += chunk
        self.out.append(0)

    def finish(self) -> bytes:
        self.filler()
        return bytes(self.out)


def _read_type(tags: list) -> tuple:
    tag = tags.pop(0)
    if tag in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[tag]
    if tag == 7:
        applied = tags.pop(0)
        if applied == 5:
            return ("list", _read_type(tags))
        if applied == 7 and tags.pop(0) == 6:
            first = _read_type(tags)
            return ("pair", first, _read_type(tags))
    raise ValueError(f"unsupported constant type tag {tag}")


def _type_tags(typ: tuple) -> list:
    if typ[0] in _SIMPLE_TAGS:
        return [_SIMPLE_TAGS[typ[0]]]
    if typ[0] == "list":
        return [7, 5] + _type_tags(typ[1])
    if typ[0] == "pair":
        return [7, 7, 6] + _type_tags(typ[1]) + _type_tags(typ[2])
    raise ValueError(f"unsupported constant type {typ}")


def _read_value(reader: BitReader, typ: tuple):
    kind = typ[0]
    if kind == "integer":
        return reader.integer()
    if kind in ("bytestring", "data"):
        return reader.bytestring()
    if kind == "string":
        return reader.bytestring().decode("utf-8")
    if kind == "unit":
        return None
    if kind == "bool":
        return bool(reader.bit())
    if kind == "list":
        items = []
        while reader.bit():
            items.append(_read_value(reader, typ[1]))
        return items
    return (_read_value(reader, typ[1]), _read_value(reader, typ[2]))


def _write_value(writer: BitWriter, typ: tuple, value) -> None:
    kind = typ[0]
    if kind == "integer":
        writer.integer(value)
    elif kind in ("bytestring", "data"):
        writer.bytestring(value)
    elif kind == "string":
        writer.bytestring(value.encode("utf-8"))
    elif kind == "bool":
        writer.bit(1 if value else 0)
    elif kind == "list":
        for item in value:
            writer.bit(1)
            _write_value(writer, typ[1], item)
        writer.bit(0)
    elif kind == "pair":
        _write_value(writer, typ[1], value[0])
        _write_value(writer, typ[2], value[1])


def _read_term(reader: BitReader):
    # An explicit stack instead of recursion: compiled validators nest deeper than Python's limit.
    result_stack: list = []
    work: list = [("read",)]
    while work:
        job = work.pop()
        if job[0] == "build":
            _, kind, arity, extra = job
            children = result_stack[len(result_stack) - arity:] if arity else []
            del result_stack[len(result_stack) - arity:]
            if kind in ("delay", "lam", "force"):
                result_stack.append((kind, children[0]))
            elif kind == "apply":
                result_stack.append(("apply", children[0], children[1]))
            elif kind == "constr":
                result_stack.append(("constr", extra, children))
            else:  # case
                result_stack.append(("case", children[0], children[1:]))
            continue
        kind = _TERM_TAGS[reader.bits(4)]
        if kind == "var":
            result_stack.append(("var", reader.natural()))
        elif kind == "error":
            result_stack.append(("error",))
        elif kind == "builtin":
            result_stack.append(("builtin", reader.bits(7)))
        elif kind == "const":
            tags = []
            while reader.bit():
                tags.append(reader.bits(4))
            typ = _read_type(tags)
            result_stack.append(("const", typ, _read_value(reader, typ)))
        elif kind in ("delay", "lam", "force"):
            work += [("build", kind, 1, None), ("read",)]
        elif kind == "apply":
            work += [("build", "apply", 2, None), ("read",), ("read",)]
        elif kind == "constr":
            tag = reader.natural()
            # Fields are a flat list: a 1 bit before each; read them eagerly one at a time.
            fields = []
            while reader.bit():
                fields.append(_read_term(reader))
            result_stack.append(("constr", tag, fields))
        else:  # case
            scrutinee = _read_term(reader)
            branches = []
            while reader.bit():
                branches.append(_read_term(reader))
            result_stack.append(("case", scrutinee, branches))
    return result_stack[0]


def _write_term(writer: BitWriter, term) -> None:
    work = [term]
    while work:
        item = work.pop()
        if isinstance(item, int):  # a list-continuation bit queued between case/constr items
            writer.bit(item)
            continue
        kind = item[0]
        writer.bits(_TERM_TAGS.index(kind), 4)
        if kind == "var":
            writer.natural(item[1])
        elif kind == "builtin":
            writer.bits(item[1], 7)
        elif kind == "const":
            for tag in _type_tags(item[1]):
                writer.bit(1)
                writer.bits(tag, 4)
            writer.bit(0)
            _write_value(writer, item[1], item[2])
        elif kind in ("delay", "lam", "force"):
            work.append(item[1])
        elif kind == "apply":
            work += [item[2], item[1]]
        elif kind in ("constr", "case"):
            if kind == "constr":
                writer.natural(item[1])
            queued = []
            for child in item[2]:
                queued += [1, child]
            queued.append(0)
            if kind == "case":
                queued.insert(0, item[1])
            work += reversed(queued)


def decode_program(flat: bytes) -> tuple:
    reader = BitReader(flat)
    version = (reader.natural(), reader.natural(), reader.natural())
    return version, _read_term(reader)


def encode_program(version: tuple, term) -> bytes:
    writer = BitWriter()
    for part in version:
        writer.natural(part)
    _write_term(writer, term)
    return writer.finish()


def unwrap_cbor(script: bytes) -> bytes:
    """The flat bytes inside a CBOR-wrapped script (unwrapping as often as it is wrapped)."""
    while True:
        try:
            inner = cbor2.loads(script)
        except Exception:
            return script
        if not isinstance(inner, bytes):
            return script
        script = inner


def wrap_cbor(flat: bytes) -> bytes:
    return cbor2.dumps(flat)


def apply_data_params(compiled_code: bytes, params_cbor: list) -> bytes:
    """A blueprint's compiled code with Plutus Data parameters (each given as its CBOR bytes)
    applied in order, returned CBOR-wrapped once, as a witness set carries it."""
    version, term = decode_program(unwrap_cbor(compiled_code))
    for param in params_cbor:
        term = ("apply", term, ("const", ("data",), param))
    return wrap_cbor(encode_program(version, term))
