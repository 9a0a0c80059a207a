"""The compiled HLO module as data: computations, instructions, their metadata and source stacks.

Parsed from ``Compiled.as_text()`` (the printed form is stable across the XLA versions JAX
0.6-0.12 ship). Each instruction keeps its shape, operands, called computations and the
metadata XLA carried through optimisation: ``op_name`` (``jit(f)/jit(helper)/tanh``, the jaxpr
primitive in its jit and ``named_scope`` path), and the source location, either as
``source_file``/``source_line`` (older XLA) or as ``stack_frame_id`` into the module's
``FileNames``/``FunctionNames``/``FileLocations``/``StackFrames`` tables (newer XLA: the whole
Python stack).

The printer writes a frame's ``parent_frame_id`` one higher than the frame it means, so a root
frame's is 1 (XLA in JAX 0.10-0.12: ``1 {file_location_id=1 parent_frame_id=1}`` is a root,
``4 {... parent_frame_id=4}`` is a child of frame 3; checked against the functions' call lines).
Parents are listed before their children, so frame 1 naming itself can only mean the shifted
form; a table without that is read as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from jitscope.model.common import Location

_COMPUTATION = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s+\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
_ARRAY_SHAPE = re.compile(r"\b([a-z]+\d*[a-z\d]*)\[([^\]]*)\]")
_OPERAND = re.compile(r"%([\w.\-]+)")
_CALLS = re.compile(r"\b(calls|to_apply|body|condition|branch_computations|true_computation|false_computation)="
                    r"(\{[^}]*\}|%?[\w.\-]+)")
_METADATA = re.compile(r"metadata=\{((?:[^{}\"]|\"(?:[^\"\\]|\\.)*\")*)\}")
#: The metadata fields jitscope reads (a field name is preceded by ``{`` or a space).
_OP_NAME = re.compile(r'(?:^|\s)op_name="((?:[^"\\]|\\.)*)"')
_SOURCE_FILE = re.compile(r'(?:^|\s)source_file="((?:[^"\\]|\\.)*)"')
_SOURCE_LINE = re.compile(r"(?:^|\s)source_line=(-?\d+)(?=\s|$)")
_FRAME_ID = re.compile(r"(?:^|\s)stack_frame_id=(-?\d+)(?=\s|$)")
_TABLE_ROW = re.compile(r"^(\d+)\s+(.*)$")
_KIND = re.compile(r"\bkind=(k\w+)")
_DIMS = re.compile(r"\b(lhs_contracting_dims)=\{([\d,]*)\}")
#: A dot XLA's GPU compiler hands to cuBLAS / cuBLASLt (hipBLAS on ROCm): a custom call whose result is a
#: tuple (the product, an s8 workspace) and whose backend_config keeps the dot's dimension numbers.
_GEMM_TARGET = re.compile(r'custom_call_target="__cublas\$(?:lt\$)?(?:gemm|matmul)')
_GEMM_CONTRACTING = re.compile(r'"lhs_contracting_dimensions":\[([^\]]*)\]')

#: Bytes per element of XLA's primitive types (sub-byte types rounded as XLA packs them).
DTYPE_BYTES: dict[str, float] = {
    "pred": 1, "s2": 0.25, "u2": 0.25, "s4": 0.5, "u4": 0.5, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2,
    "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16, "token": 0,
    "f4e2m1fn": 0.5, "f8e3m4": 1, "f8e4m3": 1, "f8e4m3fn": 1, "f8e4m3fnuz": 1, "f8e4m3b11fnuz": 1,
    "f8e5m2": 1, "f8e5m2fnuz": 1, "f8e8m0fnu": 1,
}
#: Instructions that cost nothing of their own: bookkeeping, or views XLA folds into their users.
FREE_OPCODES = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all",
                          "partition-id", "replica-id", "opt-barrier", "add-dependency", "domain"})
#: Instructions that move data without arithmetic (no FLOPs; their cost is bytes).
MOVE_OPCODES = frozenset({"broadcast", "reshape", "transpose", "copy", "slice", "dynamic-slice",
                          "dynamic-update-slice", "concatenate", "pad", "gather", "scatter", "reverse", "iota",
                          "copy-start", "copy-done", "select-and-scatter", "sort"})
#: Instructions whose cost is one operation per element of their (first) input.
REDUCE_OPCODES = frozenset({"reduce", "reduce-window", "reduce-precision", "all-reduce", "reduce-scatter"})


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape, or a tuple's leaves flattened: ``(("f32", (256, 256)),)``."""

    arrays: tuple[tuple[str, tuple[int, ...]], ...]

    @property
    def elements(self) -> int:
        total = 0
        for _, dims in self.arrays:
            n = 1
            for d in dims:
                n *= d
            total += n
        return total

    @property
    def nbytes(self) -> float:
        total = 0.0
        for dtype, dims in self.arrays:
            n = 1
            for d in dims:
                n *= d
            total += n * DTYPE_BYTES.get(dtype, 4)
        return total

    @property
    def rank(self) -> int:
        return len(self.arrays[0][1]) if self.arrays else 0


def parse_shape(text: str) -> Shape:
    """``f32[256,256]{1,0}`` or ``(f32[2]{0}, s32[])`` -> Shape; dynamic ``<=N`` bounds count as N."""
    arrays = []
    for dtype, dims in _ARRAY_SHAPE.findall(text):
        sizes = tuple(int(d.replace("<=", "")) for d in dims.split(",") if d.strip().replace("<=", "").isdigit())
        arrays.append((dtype, sizes))
    return Shape(tuple(arrays))


@dataclass(frozen=True, slots=True)
class Instruction:
    name: str
    opcode: str
    shape: Shape
    operands: tuple[str, ...]
    calls: tuple[str, ...]  # computations it runs (a fusion's body, a while's body and condition ...)
    attrs: str  # the rest of the line after the operands (dims, kind=, backend_config ...)
    op_name: str = ""
    frame_id: int | None = None
    source: Location | None = None  # source_file/source_line metadata (older XLA)
    is_root: bool = False

    @property
    def fusion_kind(self) -> str:
        match = _KIND.search(self.attrs)
        return match.group(1) if match else ""


@dataclass(frozen=True, slots=True)
class Computation:
    name: str
    instructions: tuple[Instruction, ...]
    is_entry: bool = False

    def by_name(self) -> dict[str, Instruction]:
        return {i.name: i for i in self.instructions}


@dataclass(frozen=True, slots=True)
class HloModule:
    name: str
    computations: dict[str, Computation]
    #: frame id -> (location, parent frame id or None)
    frames: dict[int, tuple[Location, int | None]] = field(default_factory=dict)

    def stack(self, instruction: Instruction) -> tuple[Location, ...]:
        """The instruction's Python stack, innermost frame first (one frame with source_line metadata)."""
        if instruction.frame_id is None:
            return (instruction.source,) if instruction.source is not None else ()
        out: list[Location] = []
        frame: int | None = instruction.frame_id
        seen: set[int] = set()
        while frame is not None and frame in self.frames and frame not in seen:
            seen.add(frame)
            location, frame = self.frames[frame]
            out.append(location)
        return tuple(out)

    @property
    def entry(self) -> Computation:
        for computation in self.computations.values():
            if computation.is_entry:
                return computation
        raise ValueError("the HLO module has no ENTRY computation")

    def instructions(self) -> dict[str, tuple[Instruction, Computation]]:
        """Every instruction by name (names are unique in a module)."""
        return {i.name: (i, c) for c in self.computations.values() for i in c.instructions}


def _split_shape(rest: str) -> tuple[str, str]:
    """``f32[4]{0} add(%a, %b), ...`` -> (shape text, ``add(%a, %b), ...``); tuple shapes are balanced."""
    rest = rest.strip()
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[: i + 1], rest[i + 1 :].strip()
    shape, _, tail = rest.partition(" ")
    return shape, tail.strip()


def _balanced(text: str, start: int) -> int:
    """Index just past the parenthesis closing the one at ``start``."""
    close = text.find(")", start + 1)
    if close >= 0 and text.find("(", start + 1, close) < 0:
        return close + 1  # no parenthesis inside (nearly every operand list): no walk
    depth = 0
    for i in range(start, len(text)):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if depth == 0:
            return i + 1
    return len(text)


def _metadata(attrs: str) -> tuple[str, int | None, Location | None]:
    start = attrs.find("metadata={")
    if start < 0:
        return "", None, None
    end = attrs.find("}", start)
    body = attrs[start + 10:end] if end >= 0 else ""
    if end < 0 or "{" in body or "\\" in body or body.count('"') % 2:
        # A brace or an escape inside a quoted value: read the quoted strings properly.
        match = _METADATA.match(attrs, start)
        if match is None:
            return "", None, None
        body = match.group(1)
    op_name = _OP_NAME.search(body)
    frame = _FRAME_ID.search(body)
    source = None
    file, line = _SOURCE_FILE.search(body), _SOURCE_LINE.search(body)
    if file is not None and line is not None:
        source = Location(_unescape(file.group(1)), int(line.group(1)))
    return (_unescape(op_name.group(1)) if op_name else "", int(frame.group(1)) if frame else None, source)


_ESCAPE = re.compile(r"\\(.)")


def _unescape(text: str) -> str:
    """A quoted HLO string's text: XLA escapes quotes, both kinds (``params[\\'w\\']``), and backslashes."""
    return _ESCAPE.sub(r"\1", text) if "\\" in text else text


def instruction_metadata(line: str) -> tuple[str, int | None, Location | None] | None:
    """(op_name, stack frame id, source_file/source_line location) of one instruction line; None for other lines.

    What :func:`parse_instruction` keeps of the metadata, without reading shapes and operands: the
    HTML listing asks this of every line of a module's text.
    """
    if _INSTRUCTION.match(line) is None:
        return None
    return _metadata(line)


def parse_instruction(line: str, shapes: dict[str, Shape] | None = None) -> Instruction | None:
    """One instruction line; ``shapes`` caches parsed shapes by their text (a module repeats a few
    hundred shapes across thousands of instructions)."""
    match = _INSTRUCTION.match(line)
    if match is None:
        return None
    shape_text, rest = _split_shape(match.group(3))
    paren = rest.find("(")
    if paren <= 0:
        return None
    opcode = rest[:paren].strip()
    end = _balanced(rest, paren)
    operands = tuple(_OPERAND.findall(rest[paren:end]))
    attrs = rest[end:]
    calls: list[str] = []
    for _, value in _CALLS.findall(attrs):
        calls.extend(name.strip().lstrip("%") for name in value.strip("{}").split(",") if name.strip())
    op_name, frame_id, source = _metadata(attrs)
    cached = shapes.get(shape_text) if shapes is not None else None
    shape = cached if cached is not None else parse_shape(shape_text)
    if shapes is not None and cached is None:
        shapes[shape_text] = shape
    return Instruction(match.group(2), opcode, shape, operands, tuple(calls), attrs, op_name,
                       frame_id, source, bool(match.group(1)))


def _parse_frames(tables: dict[str, list[tuple[int, str]]]) -> dict[int, tuple[Location, int | None]]:
    files = {i: v.strip().strip('"') for i, v in tables.get("FileNames", [])}
    functions = {i: v.strip().strip('"') for i, v in tables.get("FunctionNames", [])}
    locations: dict[int, Location] = {}
    for i, value in tables.get("FileLocations", []):
        fields = dict(re.findall(r"(\w+)=(-?\d+)", value))
        locations[i] = Location(files.get(int(fields.get("file_name_id", 0)), "?"),
                                int(fields.get("line", 0)), functions.get(int(fields.get("function_name_id", 0)), ""),
                                int(fields.get("column", 0)))
    raw: dict[int, tuple[int, int]] = {}
    for i, value in tables.get("StackFrames", []):
        fields = dict(re.findall(r"(\w+)=(-?\d+)", value))
        raw[i] = (int(fields.get("file_location_id", 0)), int(fields.get("parent_frame_id", 0)))
    shifted = any(parent == i for i, (_, parent) in raw.items())
    frames: dict[int, tuple[Location, int | None]] = {}
    for i, (location_id, parent) in raw.items():
        if location_id not in locations:
            continue
        parent -= 1 if shifted else 0
        frames[i] = (locations[location_id], parent if 0 < parent < i else None)
    return frames


def parse_module(text: str) -> HloModule:
    """The module in ``Compiled.as_text()``: computations, instructions and the stack-frame tables."""
    name = ""
    computations: dict[str, Computation] = {}
    tables: dict[str, list[tuple[int, str]]] = {}
    table: str | None = None
    current: tuple[str, bool, list[Instruction]] | None = None
    shapes: dict[str, Shape] = {}
    for line in text.splitlines():
        if line.startswith("HloModule "):
            name = line.split()[1].rstrip(",")
            continue
        if current is not None:
            if line.startswith("}"):
                computations[current[0]] = Computation(current[0], tuple(current[2]), current[1])
                current = None
            else:
                instruction = parse_instruction(line, shapes)
                if instruction is not None:
                    current[2].append(instruction)
            continue
        if line.strip() in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            table = line.strip()
            tables[table] = []
            continue
        header = _COMPUTATION.match(line)
        if header is not None:
            table = None
            current = (header.group(2), bool(header.group(1)), [])
            continue
        row = _TABLE_ROW.match(line)
        if table is not None and row is not None:
            tables[table].append((int(row.group(1)), row.group(2)))
    return HloModule(name, computations, _parse_frames(tables))


# ------------------------------------------------------------------ cost estimates from shapes


def _contracted(instruction: Instruction, operands: dict[str, Instruction]) -> int:
    lhs = operands.get(instruction.operands[0]) if instruction.operands else None
    match = _DIMS.search(instruction.attrs)
    if lhs is None or not lhs.shape.arrays or match is None:
        return 1
    dims = lhs.shape.arrays[0][1]
    size = 1
    for d in match.group(2).split(","):
        if d.isdigit() and int(d) < len(dims):
            size *= dims[int(d)]
    return size


def _conv_flops(instruction: Instruction, operands: dict[str, Instruction]) -> float:
    """2 x output elements x (kernel elements / output features): multiply-adds per output element."""
    kernel = operands.get(instruction.operands[1]) if len(instruction.operands) > 1 else None
    labels = re.search(r"dim_labels=\w+_(\w+)->", instruction.attrs)
    if kernel is None or not kernel.shape.arrays or labels is None or "o" not in labels.group(1):
        return 2.0 * instruction.shape.elements
    dims = kernel.shape.arrays[0][1]
    out_features = dims[labels.group(1).index("o")] if labels.group(1).index("o") < len(dims) else 1
    return 2.0 * instruction.shape.elements * kernel.shape.elements / max(out_features, 1)


def _prod(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _gemm_flops(instruction: Instruction, operands: dict[str, Instruction]) -> float:
    """2 x product elements x contracted size of a cuBLAS gemm custom call; 0 for any other custom call."""
    match = _GEMM_CONTRACTING.search(instruction.attrs)
    if not _GEMM_TARGET.search(instruction.attrs) or match is None or not instruction.shape.arrays:
        return 0.0
    lhs = operands.get(instruction.operands[0]) if instruction.operands else None
    if lhs is None or not lhs.shape.arrays:
        return 0.0
    dims = lhs.shape.arrays[0][1]
    axes = [int(d) for d in (a.strip().strip('"') for a in match.group(1).split(",")) if d.isdigit()]
    contracted = _prod(tuple(dims[a] for a in axes if a < len(dims)))
    return 2.0 * _prod(instruction.shape.arrays[0][1]) * contracted


def instruction_flops(instruction: Instruction, module: HloModule, operands: dict[str, Instruction]) -> float:
    """Estimated floating-point operations, as XLA's cost analysis counts them (roughly)."""
    op = instruction.opcode
    if op in FREE_OPCODES or op in MOVE_OPCODES:
        return 0.0
    if op == "dot":
        return 2.0 * instruction.shape.elements * _contracted(instruction, operands)
    if op == "convolution":
        return _conv_flops(instruction, operands)
    if op in REDUCE_OPCODES:
        first = operands.get(instruction.operands[0]) if instruction.operands else None
        return float(first.shape.elements if first is not None else instruction.shape.elements)
    if op in ("fusion", "call", "async-start"):
        return sum(computation_flops(module.computations[c], module) for c in instruction.calls
                   if c in module.computations)
    if op in ("while", "conditional"):
        return 0.0  # their bodies run as instructions (thunks, kernels) of their own, profiled as such
    if op == "custom-call":
        return _gemm_flops(instruction, operands)  # 0 for other library calls: XLA does not know their cost
    return float(instruction.shape.elements)


def computation_flops(computation: Computation, module: HloModule) -> float:
    operands = computation.by_name()
    return sum(instruction_flops(i, module, operands) for i in computation.instructions)


def instruction_bytes(instruction: Instruction, operands: dict[str, Instruction]) -> float:
    """Bytes read and written by a top-level instruction: its operands and its result."""
    if instruction.opcode in FREE_OPCODES:
        return 0.0
    read = sum(operands[o].shape.nbytes for o in instruction.operands if o in operands)
    if instruction.opcode == "custom-call" and _GEMM_TARGET.search(instruction.attrs) and instruction.shape.arrays:
        # The product only: the s8 workspace in the result tuple is scratch, not data the gemm moves.
        return read + Shape(instruction.shape.arrays[:1]).nbytes
    return read + instruction.shape.nbytes
