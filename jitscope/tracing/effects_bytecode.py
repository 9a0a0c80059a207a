"""Static facts about one code object that the effect monitor needs at run time.

A profile hook sees calls but not stores: ``d[k] = v``, ``obj.x = v`` and
``global x; x = v`` run as opcodes, not calls. So before user code runs, its bytecode
is read once to find every such store and *what* it writes to (``params['w']``,
``self.cache``), and every place that may call a function the profiler cannot see
(NumPy's Cython random methods). A small symbolic stack walk recovers those targets
from straight-line code; anything it cannot follow becomes "unknown" rather than a
guess, so the monitor degrades to coarser checks instead of wrong ones.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass

_PLAIN_KEY_TYPES = (str, int, bytes, bool, float)


@dataclass(frozen=True, slots=True)
class ObjectPath:
    """How to reach an object from a frame: a variable, then attributes and constant keys."""

    #: "fast" (local or argument), "deref" (closure cell), "global" or "name" (module-level code).
    root: str
    name: str
    #: ("attr", name) or ("item", constant key), applied in order.
    steps: tuple[tuple[str, object], ...] = ()

    def then(self, step: str, value: object) -> ObjectPath:
        return ObjectPath(self.root, self.name, (*self.steps, (step, value)))

    def __str__(self) -> str:
        text = self.name
        for step, value in self.steps:
            text += f".{value}" if step == "attr" else f"[{value!r}]"
        return text


@dataclass(frozen=True, slots=True)
class _Const:
    """A constant on the symbolic stack (only constant keys can be followed)."""

    value: object


@dataclass(frozen=True, slots=True)
class StoreSite:
    """An opcode that changes an object in place: item or attribute store/delete, or ``x += ...``."""

    #: "item", "attr" or "inplace".
    operation: str
    #: The object being changed; None when the stack walk could not follow it.
    target: ObjectPath | None
    line: int
    attribute: str | None = None
    deleting: bool = False

    def describe(self, target_text: str) -> str:
        """Detail text, e.g. ``item assignment on argument 'params'``."""
        verb = {"item": "item", "attr": "attribute", "inplace": "in-place"}[self.operation]
        action = "deletion" if self.deleting else ("update" if self.operation == "inplace" else "assignment")
        if self.operation == "attr":
            return f"{verb} {action} .{self.attribute} on {target_text}"
        return f"{verb} {action} on {target_text}"


@dataclass(frozen=True, slots=True)
class NameStore:
    """A store to a module global (``STORE_GLOBAL``) or a closure variable (``nonlocal``)."""

    name: str
    line: int
    deleting: bool = False


@dataclass(frozen=True, slots=True)
class CallCandidate:
    """A place that may call a function invisible to the profiler; confirmed at run time."""

    callee: ObjectPath
    line: int


@dataclass(frozen=True, slots=True)
class CodeFacts:
    """Everything the monitor needs to know about one code object, computed once."""

    global_stores: tuple[NameStore, ...] = ()
    nonlocal_stores: tuple[NameStore, ...] = ()
    stores: tuple[StoreSite, ...] = ()
    call_candidates: tuple[CallCandidate, ...] = ()
    loaded_globals: frozenset[str] = frozenset()
    #: Code objects defined inside this one (functions, lambdas, comprehensions), recursively.
    nested_codes: tuple[types.CodeType, ...] = ()

    @property
    def watches_return(self) -> bool:
        """True when the monitor must compare state when a frame of this code returns."""
        return bool(self.global_stores or self.nonlocal_stores or self.stores)


def nested_code_objects(code: types.CodeType) -> tuple[types.CodeType, ...]:
    """Every code object defined inside ``code``, depth first."""
    found: list[types.CodeType] = []
    pending = [const for const in code.co_consts if isinstance(const, types.CodeType)]
    while pending:
        inner = pending.pop()
        found.append(inner)
        pending.extend(const for const in inner.co_consts if isinstance(const, types.CodeType))
    return tuple(found)


class _StackWalk:
    """Symbolic execution of straight-line bytecode, just deep enough to name store targets."""

    def __init__(self, code: types.CodeType, call_names: frozenset[str]) -> None:
        self.code = code
        self.call_names = call_names
        self.stack: list[ObjectPath | _Const | None] = []
        self.saved: dict[int, list[ObjectPath | _Const | None]] = {}
        self.falls_through = True
        self.last_was_inplace = False
        self.line = code.co_firstlineno
        self.global_stores: list[NameStore] = []
        self.nonlocal_stores: list[NameStore] = []
        self.stores: list[StoreSite] = []
        self.candidates: list[CallCandidate] = []
        self.loaded_globals: set[str] = set()

    def pop(self, count: int = 1) -> ObjectPath | _Const | None:
        item: ObjectPath | _Const | None = None
        for _ in range(count):
            item = self.stack.pop() if self.stack else None
        return item

    def push(self, item: ObjectPath | _Const | None, count: int = 1) -> None:
        self.stack.extend([item] * count)

    def enter(self, instruction: dis.Instruction) -> None:
        positions = getattr(instruction, "positions", None)
        if positions is not None and positions.lineno is not None:
            self.line = positions.lineno
        if instruction.is_jump_target:
            saved = self.saved.pop(instruction.offset, None)
            if not self.falls_through:
                self.stack = saved or []
            elif saved is not None:
                self.stack = _merge(self.stack, saved)
        elif not self.falls_through:
            self.stack = []
        self.falls_through = True

    def run(self) -> None:
        for instruction in dis.get_instructions(self.code):
            self.enter(instruction)
            inplace = self.step(instruction)
            self.last_was_inplace = inplace

    def note_candidate(self, path: ObjectPath) -> None:
        last = path.steps[-1][1] if path.steps else path.name
        if last in self.call_names:
            self.candidates.append(CallCandidate(path, self.line))

    def store_name(self, path: ObjectPath) -> None:
        if self.last_was_inplace:
            self.stores.append(StoreSite("inplace", path, self.line))

    def step(self, ins: dis.Instruction) -> bool:
        """Apply one instruction; return True when it was an in-place binary operator."""
        name, arg, argval = ins.opname, ins.arg, ins.argval
        if name in (
            "RESUME",
            "NOP",
            "CACHE",
            "EXTENDED_ARG",
            "PRECALL",
            "KW_NAMES",
            "COPY_FREE_VARS",
            "MAKE_CELL",
            "NOT_TAKEN",
        ):
            return self.last_was_inplace if name == "EXTENDED_ARG" else False
        if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW"):
            self.push(ObjectPath("fast", argval))
        elif name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            for var in argval:
                self.push(ObjectPath("fast", var))
        elif name in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            self.push(ObjectPath("deref", argval))
            self.note_candidate(ObjectPath("deref", argval))
        elif name in ("LOAD_GLOBAL", "LOAD_NAME"):
            if name == "LOAD_GLOBAL" and arg is not None and arg & 1:
                self.push(None)  # the NULL pushed before a callable
            root = "global" if name == "LOAD_GLOBAL" else "name"
            self.loaded_globals.add(argval)
            self.push(ObjectPath(root, argval))
            self.note_candidate(ObjectPath(root, argval))
        elif name in ("LOAD_CONST", "LOAD_SMALL_INT"):
            self.push(_Const(argval))
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            owner = self.pop()
            path = owner.then("attr", argval) if isinstance(owner, ObjectPath) else None
            if path is not None:
                self.note_candidate(path)
            # 3.11 LOAD_METHOD and 3.12+ LOAD_ATTR with the low bit set push two values.
            pushes_two = name == "LOAD_METHOD" or (
                name == "LOAD_ATTR" and arg is not None and arg & 1 and _LOAD_ATTR_HAS_METHOD_FLAG
            )
            self.push(None if pushes_two else path, 2 if pushes_two else 1)
        elif name == "BINARY_SUBSCR":
            key, container = self.pop(), self.pop()
            plain_key = isinstance(key, _Const) and isinstance(key.value, _PLAIN_KEY_TYPES)
            if isinstance(container, ObjectPath) and plain_key:
                assert isinstance(key, _Const)
                self.push(container.then("item", key.value))
            else:
                self.push(None)
        elif name == "COPY":
            depth = int(arg or 1)
            self.push(self.stack[-depth] if len(self.stack) >= depth else None)
        elif name == "SWAP":
            depth = int(arg or 2)
            while len(self.stack) < depth:
                self.stack.insert(0, None)
            self.stack[-1], self.stack[-depth] = self.stack[-depth], self.stack[-1]
        elif name in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            self.pop()  # the key
            container = self.pop()
            if name == "STORE_SUBSCR":
                self.pop()  # the value
            target = container if isinstance(container, ObjectPath) else None
            self.stores.append(StoreSite("item", target, self.line, deleting=name == "DELETE_SUBSCR"))
        elif name in ("STORE_ATTR", "DELETE_ATTR"):
            owner = self.pop()
            if name == "STORE_ATTR":
                self.pop()
            target = owner if isinstance(owner, ObjectPath) else None
            self.stores.append(
                StoreSite("attr", target, self.line, attribute=argval, deleting=name == "DELETE_ATTR")
            )
        elif name in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            if name == "STORE_GLOBAL":
                self.pop()
            self.global_stores.append(NameStore(argval, self.line, deleting=name == "DELETE_GLOBAL"))
            self.store_name(ObjectPath("global", argval))
        elif name in ("STORE_DEREF", "DELETE_DEREF"):
            if name == "STORE_DEREF":
                self.pop()
            if argval in self.code.co_freevars:
                self.nonlocal_stores.append(NameStore(argval, self.line, deleting=name == "DELETE_DEREF"))
            self.store_name(ObjectPath("deref", argval))
        elif name in ("STORE_FAST", "STORE_NAME"):
            self.pop()
            self.store_name(ObjectPath("fast" if name == "STORE_FAST" else "name", argval))
        elif name == "BINARY_OP":
            self.pop(2)
            self.push(None)
            return ins.argrepr.endswith("=") and ins.argrepr not in ("==", "!=", "<=", ">=")
        else:
            self.apply_generic(ins)
        return False

    def apply_generic(self, ins: dis.Instruction) -> None:
        name, arg = ins.opname, int(ins.arg or 0)
        if name in ("POP_TOP", "RETURN_VALUE"):
            self.pop()
        elif name == "PUSH_NULL":
            self.push(None)
        elif name in ("UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "GET_ITER", "TO_BOOL", "FORMAT_SIMPLE"):
            self.pop()
            self.push(None)
        elif name in ("COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SLICE"):
            self.pop(2)
            self.push(None)
        elif name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
            self.pop(arg)
            self.push(None)
        elif name == "BUILD_MAP":
            self.pop(2 * arg)
            self.push(None)
        elif name == "BUILD_CONST_KEY_MAP":
            self.pop(arg + 1)
            self.push(None)
        elif name == "FORMAT_VALUE":
            self.pop(2 if arg & 0x04 else 1)
            self.push(None)
        elif name == "CALL":
            self.pop(arg + 2)
            self.push(None)
        elif name == "CALL_KW":
            self.pop(arg + 3)
            self.push(None)
        elif name.startswith("POP_JUMP"):
            self.pop()
            self.saved[ins.argval] = list(self.stack)
        elif name in (
            "JUMP_FORWARD",
            "JUMP_BACKWARD",
            "JUMP_BACKWARD_NO_INTERRUPT",
            "JUMP",
            "JUMP_NO_INTERRUPT",
        ):
            self.saved[ins.argval] = list(self.stack)
            self.falls_through = False
        elif name in ("RETURN_CONST", "RAISE_VARARGS", "RERAISE"):
            self.falls_through = False
        else:
            # Anything else (calls with *args, with-blocks, loops...): forget the stack rather than guess.
            self.stack = []


def _merge(
    first: list[ObjectPath | _Const | None], second: list[ObjectPath | _Const | None]
) -> list[ObjectPath | _Const | None]:
    """Stack state where two paths meet: keep only what both agree on, aligned from the top."""
    depth = min(len(first), len(second))
    if depth == 0:
        return []
    return [a if a == b else None for a, b in zip(first[-depth:], second[-depth:], strict=True)]


def _load_attr_has_method_flag() -> bool:
    """Python 3.12 folded LOAD_METHOD into LOAD_ATTR (low bit of the argument)."""
    return "LOAD_METHOD" not in dis.opmap


_LOAD_ATTR_HAS_METHOD_FLAG = _load_attr_has_method_flag()


def analyse_code(code: types.CodeType, call_names: frozenset[str] = frozenset()) -> CodeFacts:
    """Read ``code``'s bytecode once: its stores, its possible invisible calls, the globals it loads.

    ``call_names`` are the attribute or global names that may be a call the profiler cannot
    see (e.g. ``normal`` for ``np.random.normal``); each load of one becomes a candidate.
    """
    walk = _StackWalk(code, call_names)
    try:
        walk.run()
    except (ValueError, IndexError, TypeError):  # unexpected bytecode: know less, never fail
        return CodeFacts(nested_codes=nested_code_objects(code))
    return CodeFacts(
        global_stores=tuple(walk.global_stores),
        nonlocal_stores=tuple(walk.nonlocal_stores),
        stores=tuple(walk.stores),
        call_candidates=tuple(walk.candidates),
        loaded_globals=frozenset(walk.loaded_globals),
        nested_codes=nested_code_objects(code),
    )
