"""Which line of the user's code made each buffer (pure: no jax).

A value's line is its defining instruction's source stack (the HLO metadata), listed the way
``jitscope profile`` lists time (``profiling/attribute.listed_line``): at the line of the inspected
function that made it, or called the helper that did. Instructions XLA made without metadata get
the stack of what they stand for: a fusion or call its fused instructions', a loop body's parameter
its loop's, a tuple element, copy or bitcast its operand's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from jitscope.model.common import Location
from jitscope.profiling.attribute import FunctionSpan, listed_line
from jitscope.profiling.callsites import Chain
from jitscope.profiling.hlo import HloModule, Instruction
from jitscope.profiling.hlo_work import fed_reduce_stack, parts

#: Instructions whose value is another's (followed to it for a stack).
_FORWARDING = frozenset({"get-tuple-element", "bitcast", "copy", "copy-start", "copy-done", "tuple", "opt-barrier",
                         "reshape", "dynamic-update-slice", "add-dependency"})
_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Source:
    """Where a buffer is listed: the line, whether it is in the function, the helper's line."""

    location: Location | None
    in_function: bool = True
    helper: Location | None = None
    primitive: str = ""


class Sources:
    """Stacks and listed lines of a module's instructions, each worked out once."""

    def __init__(self, module: HloModule, span: FunctionSpan, is_user_file: Callable[[str], bool],
                 chains: Mapping[tuple[str, int], Chain] | None = None) -> None:
        self.module = module
        self.span = span
        self.is_user_file = is_user_file
        self.chains = chains or {}
        self.instructions = module.instructions()
        self.callers: dict[str, Instruction] = {}
        for instruction, _ in self.instructions.values():
            for name in instruction.calls:
                self.callers.setdefault(name, instruction)
        self._cache: dict[str, Source] = {}

    def stack(self, name: str, depth: int = 0) -> tuple[Location, ...]:
        found = self.instructions.get(name)
        if found is None or depth > _DEPTH:
            return ()
        instruction, computation = found
        stack = self.module.stack(instruction)
        if stack:
            return stack
        if instruction.opcode in ("fusion", "call") and instruction.calls:
            stack = next((s for p in parts(instruction, self.module) if (s := self.module.stack(p.instruction))), ())
        elif instruction.opcode == "parameter" and not computation.is_entry:
            caller = self.callers.get(computation.name)
            stack = self.stack(caller.name, depth + 1) if caller is not None else ()
        elif instruction.opcode in _FORWARDING or instruction.opcode == "while":
            stack = next((s for o in instruction.operands if (s := self.stack(o, depth + 1))), ())
        return stack or fed_reduce_stack(instruction, self.module)

    def primitive(self, name: str, depth: int = 0) -> str:
        found = self.instructions.get(name)
        if found is None or depth > _DEPTH:
            return ""
        instruction, computation = found
        if instruction.opcode == "parameter" and not computation.is_entry:
            caller = self.callers.get(computation.name)
            return self.primitive(caller.name, depth + 1) if caller is not None else ""
        op_name = instruction.op_name
        if not op_name and instruction.opcode in ("fusion", "call"):
            op_name = next((p.instruction.op_name for p in parts(instruction, self.module) if p.instruction.op_name),
                           "")
        return op_name.rsplit("/", 1)[-1] if op_name else ""

    def source(self, name: str) -> Source:
        """The line a value made by instruction ``name`` is listed at."""
        if name in self._cache:
            return self._cache[name]
        stack = self.stack(name)
        if self.chains and len(stack) == 1 and not self.span.contains(stack[0]):
            stack = self.chains.get((stack[0].file, stack[0].line), stack)
        if not stack:
            found = Source(None, primitive=self.primitive(name))
        else:
            where, inside, helper, _ = listed_line(stack, self.span, self.is_user_file)
            found = Source(where, inside, helper if helper != where else None, self.primitive(name))
        self._cache[name] = found
        return found

    def op_name(self, name: str) -> str:
        """The instruction's op_name and its fused instructions' (the scopes it ran in), joined."""
        found = self.instructions.get(name)
        if found is None:
            return ""
        instruction = found[0]
        names = [instruction.op_name]
        if instruction.opcode in ("fusion", "call"):
            names += [p.instruction.op_name for p in parts(instruction, self.module)]
        return " ".join(n for n in names if n)

    def argument(self, name: str) -> str:
        """An entry parameter's name as JAX put it in op_name (``x``, ``params['w']``)."""
        found = self.instructions.get(name)
        return found[0].op_name if found is not None and found[0].op_name else name
