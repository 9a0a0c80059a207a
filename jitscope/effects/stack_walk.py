"""The symbolic stack walk over one code object's bytecode (see :mod:`jitscope.effects.bytecode`).

Every stack slot holds what is known about its value: an ``ObjectPath``, a constant, the
result of a call, or None for "unknown". What the walk finds is recorded in the types of
:mod:`jitscope.effects.code_facts`.
"""

from __future__ import annotations

import dis
import sys
import types
from dataclasses import dataclass
from typing import Any

from jitscope.effects.code_facts import (
    HANDING_BUILTINS,
    CallCandidate,
    HandedCall,
    NameStore,
    ObjectPath,
    StoreSite,
)

_PLAIN_KEY_TYPES = (str, int, bytes, bool, float)


@dataclass(frozen=True, slots=True)
class _Const:
    """A constant on the symbolic stack (only constant keys can be followed)."""

    value: object


#: The walk's mark for a value made by ``functools.partial(...)``, so ``log = partial(print); log(x)``
#: (a local bound after the frame started) can still be a candidate.
_PARTIAL_MADE = "functools.partial()"


@dataclass(frozen=True, slots=True)
class _Made:
    """The result of calling ``callee`` (``log = make_logger()``, ``show = bind(print)``): a local
    bound to it may be a partial, decided when the frame starts."""

    callee: ObjectPath


_Item = ObjectPath | _Const | _Made | None

#: Opcodes with no effect on the values the walk follows.
_NO_EFFECT = frozenset(
    {"RESUME", "NOP", "CACHE", "PRECALL", "KW_NAMES", "COPY_FREE_VARS", "MAKE_CELL", "NOT_TAKEN"}
)
# Opcodes whose operand count changes between versions (BINARY_SLICE, FORMAT_VALUE's spec flag,
# MAKE_FUNCTION's closure/defaults in 3.11-3.12, CALL_KW's names tuple in 3.13, END_FOR's
# one or two operands): how many they pop is read from ``dis.stack_effect`` on the running
# Python instead of being written down per version.
#: Opcodes that pop operands and push exactly one unknown result.
_RESULT_OPS = frozenset(
    {
        "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "UNARY_POSITIVE", "GET_ITER", "GET_YIELD_FROM_ITER",
        "GET_AITER", "GET_ANEXT", "GET_AWAITABLE", "TO_BOOL", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC",
        "FORMAT_VALUE", "CONVERT_VALUE", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BINARY_SLICE",
        "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "BUILD_MAP",
        "BUILD_CONST_KEY_MAP", "LIST_TO_TUPLE", "CALL_INTRINSIC_1", "CALL_INTRINSIC_2", "CALL_FUNCTION_EX",
        "MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE", "IMPORT_NAME", "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS",
        "RETURN_GENERATOR", "END_SEND",
    }
)  # fmt: skip
#: Opcodes that pop operands and push nothing.
_DISCARD_OPS = frozenset(
    {
        "POP_TOP", "END_FOR", "POP_ITER", "POP_EXCEPT", "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND",
        "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "SETUP_ANNOTATIONS",
    }
)  # fmt: skip
#: Unpacking: one operand becomes several unknown values.
_SPREAD_OPS = frozenset({"UNPACK_SEQUENCE", "UNPACK_EX"})
_UNCONDITIONAL_JUMPS = frozenset(
    {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}
)
#: Conditional jumps: the stack on each side is ``dis.stack_effect`` with ``jump`` True or False.
_CONDITIONAL_JUMP_PREFIXES = ("POP_JUMP_", "JUMP_IF_", "FOR_ITER")
_BLOCK_ENDS = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})

#: 3.12 folded LOAD_METHOD into LOAD_ATTR (low bit of the argument). ``"LOAD_METHOD" in
#: dis.opmap`` cannot tell: 3.12 and 3.13 keep it there as a pseudo-instruction.
_LOAD_ATTR_HAS_METHOD_FLAG = sys.version_info >= (3, 12)
#: 3.11 and 3.12 push LOAD_GLOBAL's NULL below the callable, 3.13+ above it.
_NULL_AFTER_GLOBAL = sys.version_info >= (3, 13)


def _stack_effect(ins: dis.Instruction, *, jump: bool | None = None) -> int:
    arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
    return dis.stack_effect(ins.opcode, arg, jump=jump)


class StackWalk:
    """Symbolic execution of straight-line bytecode, just deep enough to name store targets.

    Every stack slot holds what is known about its value: an ``ObjectPath``, a constant, or
    None for "unknown". An opcode the walk does not model empties the stack: later pops then
    give None. That is safe, while a wrong operand count would name the wrong object.
    """

    def __init__(self, code: types.CodeType, call_names: frozenset[str]) -> None:
        self.code = code
        self.call_names = call_names
        self.stack: list[_Item] = []
        self.saved: dict[int, list[_Item]] = {}
        self.falls_through = True
        self.last_was_inplace = False
        self.line = code.co_firstlineno
        self.global_stores: list[NameStore] = []
        self.nonlocal_stores: list[NameStore] = []
        self.stores: list[StoreSite] = []
        self.candidates: list[CallCandidate] = []
        self.handed_calls: list[HandedCall] = []
        #: Locals assigned the result of ``functools.partial(...)``.
        self.partial_locals: set[str] = set()
        #: Locals assigned the result of another call: what made them.
        self.made_by: dict[str, ObjectPath] = {}
        self.returns_partial = False
        self.loaded_globals: set[str] = set()

    def pop(self, count: int = 1) -> _Item:
        item: _Item = None
        for _ in range(count):
            item = self.stack.pop() if self.stack else None
        return item

    def push(self, item: _Item, count: int = 1) -> None:
        self.stack.extend([item] * count)

    def adjusted(self, effect: int) -> list[_Item]:
        """The stack after an opcode that pops ``-effect`` values or pushes ``effect`` unknown ones."""
        if effect >= 0:
            return [*self.stack, *[None] * effect]
        return self.stack[:effect] if len(self.stack) > -effect else []

    def enter(self, instruction: dis.Instruction) -> None:
        positions = instruction.positions
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
        if name in _NO_EFFECT:
            return False
        if name == "EXTENDED_ARG":
            return self.last_was_inplace
        if name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_BORROW"):
            self.push(ObjectPath("fast", argval))
        elif name in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
            for var in argval:
                self.push(ObjectPath("fast", var))
        elif name in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
            self.push(ObjectPath("deref", argval))
            self.note_candidate(ObjectPath("deref", argval))
        elif name in ("LOAD_GLOBAL", "LOAD_NAME"):
            self.load_global(name, arg, argval)
        elif name in ("LOAD_CONST", "LOAD_SMALL_INT"):
            self.push(_Const(argval))
        elif name in ("LOAD_ATTR", "LOAD_METHOD"):
            self.load_attr(name, arg, argval)
        elif name == "BINARY_SUBSCR" or (name == "BINARY_OP" and ins.argrepr == "[]"):
            self.subscript()
        elif name == "BINARY_OP":
            self.pop(2)
            self.push(None)
            return ins.argrepr.endswith("=") and ins.argrepr not in ("==", "!=", "<=", ">=")
        elif name == "COPY":
            depth = int(arg or 1)
            self.push(self.stack[-depth] if len(self.stack) >= depth else None)
        elif name == "SWAP":
            depth = int(arg or 2)
            while len(self.stack) < depth:
                self.stack.insert(0, None)
            self.stack[-1], self.stack[-depth] = self.stack[-depth], self.stack[-1]
        elif name.startswith(("STORE_", "DELETE_")):
            self.store(name, argval)
        elif name == "RETURN_VALUE" and self.stack and self._is_partial(self.stack[-1]):
            self.returns_partial = True
            self.apply_generic(ins)
        elif name in ("CALL", "CALL_KW"):
            made = self.handed_call(int(arg or 0), keywords=name == "CALL_KW")
            if name == "CALL":
                self.builtin_attribute_store(int(arg or 0))
            # 3.11 counts the callable and NULL under PRECALL; CALL_KW (3.13) also pops the names tuple.
            self.pop(int(arg or 0) + (3 if name == "CALL_KW" else 2))
            self.push(made)
        else:
            self.apply_generic(ins)
        return False

    def builtin_attribute_store(self, n_args: int) -> None:
        """``setattr(obj, "h", x)`` and ``delattr(obj, "h")``: attribute stores no opcode shows."""
        if n_args not in (2, 3) or len(self.stack) < n_args + 1:
            return
        args = self.stack[-n_args:]
        callables = self.stack[-n_args - 2 : -n_args]
        deleting = n_args == 2
        builtin = ObjectPath("global", "delattr" if deleting else "setattr")
        owner, attribute = args[0], args[1]
        if builtin in callables and isinstance(attribute, _Const) and isinstance(attribute.value, str):
            target = owner if isinstance(owner, ObjectPath) else None
            self.stores.append(
                StoreSite("attr", target, self.line, attribute=attribute.value, deleting=deleting)
            )

    def _is_partial(self, item: _Item) -> bool:
        return _partial_mark(self, item)

    def handed_call(self, n_args: int, *, keywords: bool) -> _Item:
        """Note a CALL of a plain name (a possible partial) or of ``map``/``filter``; mark ``partial(...)``.

        Keyword values are counted in ``n_args`` (3.11-3.12 KW_NAMES + CALL, 3.13 CALL_KW with
        the names tuple on top): the first positional argument is still the lowest.
        """
        stack = self.stack[:-1] if keywords else self.stack
        if len(stack) < n_args + 2:
            return None
        callables = stack[-n_args - 2 : -n_args] if n_args else stack[-2:]
        callee = next((item for item in callables if isinstance(item, ObjectPath)), None)
        if callee is None:
            return None
        if callee in (
            ObjectPath("global", "partial"),
            ObjectPath("global", "functools", (("attr", "partial"),)),
        ):
            return _Const(_PARTIAL_MADE)
        if callee.root == "name":
            return None
        args = tuple(item for item in stack[len(stack) - n_args :] if isinstance(item, ObjectPath))
        first = stack[-n_args] if n_args else None
        first_arg = first if isinstance(first, ObjectPath) else None
        if callee.root == "global" and not callee.steps and callee.name in HANDING_BUILTINS:
            if first_arg is not None:
                self.handed_calls.append(HandedCall(callee, first_arg, self.line, args))
            return None
        maker = self.made_by.get(callee.name) if callee.root == "fast" and not callee.steps else None
        self.handed_calls.append(HandedCall(callee, first_arg, self.line, args, maker))
        return _Made(callee)

    def load_global(self, name: str, arg: int | None, argval: str) -> None:
        path = ObjectPath("global" if name == "LOAD_GLOBAL" else "name", argval)
        with_null = name == "LOAD_GLOBAL" and arg is not None and arg & 1
        if with_null and not _NULL_AFTER_GLOBAL:
            self.push(None)  # the NULL pushed before a callable
        self.push(path)
        if with_null and _NULL_AFTER_GLOBAL:
            self.push(None)
        self.loaded_globals.add(argval)
        self.note_candidate(path)

    def load_attr(self, name: str, arg: int | None, argval: str) -> None:
        owner = self.pop()
        path = owner.then("attr", argval) if isinstance(owner, ObjectPath) else None
        if path is not None:
            self.note_candidate(path)
        # 3.11 LOAD_METHOD and 3.12+ LOAD_ATTR with the low bit set push two values (method and
        # self, or NULL and attribute): the lower one stands for the callee of a later CALL.
        pushes_two = name == "LOAD_METHOD" or bool(_LOAD_ATTR_HAS_METHOD_FLAG and arg is not None and arg & 1)
        self.push(path)
        if pushes_two:
            self.push(None)

    def subscript(self) -> None:
        key, container = self.pop(), self.pop()
        plain_key = isinstance(key, _Const) and isinstance(key.value, _PLAIN_KEY_TYPES)
        if isinstance(container, ObjectPath) and isinstance(key, _Const) and plain_key:
            self.push(container.then("item", key.value))
        else:
            self.push(None)

    def store(self, name: str, argval: Any) -> None:
        """Every ``STORE_*`` and ``DELETE_*`` opcode."""
        deleting = name.startswith("DELETE_")
        kind = name.split("_", 1)[1]
        if kind in ("SUBSCR", "SLICE"):
            # STORE_SLICE (3.12+): value, container, start, stop; 3.11 builds a slice for STORE_SUBSCR.
            self.pop(2 if kind == "SLICE" else 1)
            container = self.pop()
            if not deleting:
                self.pop()
            target = container if isinstance(container, ObjectPath) else None
            self.stores.append(StoreSite("item", target, self.line, deleting=deleting))
        elif kind == "ATTR":
            owner = self.pop()
            if not deleting:
                self.pop()
            target = owner if isinstance(owner, ObjectPath) else None
            self.stores.append(StoreSite("attr", target, self.line, attribute=argval, deleting=deleting))
        elif kind == "GLOBAL":
            if not deleting:
                self.pop()
            self.global_stores.append(NameStore(argval, self.line, deleting=deleting))
            self.store_name(ObjectPath("global", argval))
        elif kind == "DEREF":
            if not deleting:
                self.pop()
            if argval in self.code.co_freevars:
                self.nonlocal_stores.append(NameStore(argval, self.line, deleting=deleting))
            self.store_name(ObjectPath("deref", argval))
        elif kind in ("FAST", "NAME", "FAST_MAYBE_NULL"):
            if not deleting:
                top = self.stack[-1] if self.stack else None
                if kind != "NAME" and top == _Const(_PARTIAL_MADE):
                    self.partial_locals.add(argval)
                elif kind != "NAME" and isinstance(top, _Made):
                    self.made_by[argval] = top.callee
                self.pop()
                self.store_name(ObjectPath("name" if kind == "NAME" else "fast", argval))
        elif name == "STORE_FAST_STORE_FAST":  # 3.13: two stores in a row, e.g. ``a, b = pair``
            first, second = argval
            self.pop()
            self.store_name(ObjectPath("fast", first))
            self.last_was_inplace = False
            self.pop()
            self.store_name(ObjectPath("fast", second))
        elif name == "STORE_FAST_LOAD_FAST":  # 3.13: ``x += y`` then a load on the same line
            stored, loaded = argval
            self.pop()
            self.store_name(ObjectPath("fast", stored))
            self.push(ObjectPath("fast", loaded))
        else:
            self.stack = []

    def apply_generic(self, ins: dis.Instruction) -> None:
        name = ins.opname
        try:
            if name in _RESULT_OPS:
                self.pop(1 - _stack_effect(ins))
                self.push(None)
            elif name in _DISCARD_OPS:
                self.pop(-_stack_effect(ins))
            elif name in _SPREAD_OPS:
                self.pop()
                self.push(None, 1 + _stack_effect(ins))
            elif name == "PUSH_NULL":
                self.push(None)
            elif name in _UNCONDITIONAL_JUMPS:
                self.saved[ins.argval] = list(self.stack)
                self.falls_through = False
            elif name.startswith(_CONDITIONAL_JUMP_PREFIXES):
                self.saved[ins.argval] = self.adjusted(_stack_effect(ins, jump=True))
                self.stack = self.adjusted(_stack_effect(ins, jump=False))
            elif name in _BLOCK_ENDS:
                self.falls_through = False
            else:
                # Anything else (with-blocks, exception handling, yields...): forget the stack rather than guess.
                self.stack = []
        except ValueError:  # no stack effect known for this opcode and argument
            self.stack = []


def _partial_mark(walk: StackWalk, item: _Item) -> bool:
    return item == _Const(_PARTIAL_MADE) or (
        isinstance(item, ObjectPath) and item.root == "fast" and not item.steps and item.name in walk.partial_locals
    )


def _merge(first: list[_Item], second: list[_Item]) -> list[_Item]:
    """Stack state where two paths meet: keep only what both agree on, aligned from the top."""
    depth = min(len(first), len(second))
    if depth == 0:
        return []
    return [a if a == b else None for a, b in zip(first[-depth:], second[-depth:], strict=True)]
