"""Hazards listed as missed in issue 21 (at the end of PAIRS), and wrong-finding patterns read on the repos corpus (brax, mjx, jax-md, pgx, levanter; issue 21), fixed
generally: values static through the project's own types, integers derived from static shapes and fields,
branches that only run on an eager path, truthiness of containers of arrays, jit of the same function
object in a loop, and dicts made mutable by a conversion helper.

Each case is a pair: correct code that must produce no finding of the rule, and a sibling that differs in
the one way that makes it a hazard, which must still be found.
"""

from __future__ import annotations

import pytest

from tests.lint.helpers import codes

#: name -> (rule, correct code, hazardous sibling)
PAIRS: dict[str, tuple[str, str, str]] = {
    # 1. static through the user's own types
    "project-static-field-helper": (
        "JS202",
        """
        import dataclasses
        import jax, jax.numpy as jnp
        def static_field(**kwargs):
            return dataclasses.field(metadata={"static": True}, **kwargs)
        @dataclasses.dataclass
        class Grid:
            cells: jax.Array
            num_dims: int = static_field()
        @jax.jit
        def f(grid: Grid):
            return [grid.cells.sum(axis=i) for i in range(grid.num_dims)]
        """,
        """
        import dataclasses
        import jax, jax.numpy as jnp
        def static_field(**kwargs):
            return dataclasses.field(metadata={"static": True}, **kwargs)
        @dataclasses.dataclass
        class Grid:
            cells: jax.Array
            num_dims: int = static_field()
        @jax.jit
        def f(grid: Grid):
            return [grid.cells.sum(axis=i) for i in range(grid.cells.argmax())]
        """,
    ),
    "method-returning-len-of-static-field": (
        "JS202",
        """
        import jax, jax.numpy as jnp
        from flax import struct
        @struct.dataclass
        class System:
            mass: jax.Array
            link_types: str = struct.field(pytree_node=False)
            def num_links(self) -> int:
                return len(self.link_types)
        @jax.jit
        def f(sys: System, x):
            return jnp.arange(sys.num_links()) * x
        """,
        """
        import jax, jax.numpy as jnp
        from flax import struct
        @struct.dataclass
        class System:
            mass: jax.Array
            link_types: str = struct.field(pytree_node=False)
            def num_links(self) -> int:
                return jnp.sum(self.mass > 0)
        @jax.jit
        def f(sys: System, x):
            return jnp.arange(sys.num_links()) * x
        """,
    ),
    "method-returning-a-field-of-a-library-base-class": (
        "JS201",
        """
        import jax, jax.numpy as jnp
        from mujoco import mjx
        class System(mjx.Model):
            def act_size(self) -> int:
                return self.nu
        @jax.jit
        def to_tau(sys: System, act):
            if sys.act_size() == 0:
                return jnp.zeros(3)
            return act * 2
        """,
        """
        import jax, jax.numpy as jnp
        from mujoco import mjx
        class System(mjx.Model):
            def act_size(self) -> int:
                return self.nu
        @jax.jit
        def to_tau(sys: System, act):
            if act.sum() == 0:
                return jnp.zeros(3)
            return act * 2
        """,
    ),
    "field-of-a-library-object": (
        "JS201",
        """
        import jax
        from mujoco import mjx
        @jax.jit
        def get(sys: mjx.Model, x):
            d = mjx.make_data(sys)
            if d.ncon == 0:
                return None
            return x
        """,
        """
        import jax
        from mujoco import mjx
        @jax.jit
        def get(sys: mjx.Model, x):
            d = mjx.make_data(sys)
            if d.qpos.sum() == 0:
                return None
            return x
        """,
    ),
    "enum-member-comparison": (
        "JS201",
        """
        import enum
        import jax
        class Impl(enum.Enum):
            JAX = "jax"
            WARP = "warp"
        @jax.jit
        def forward(m, d):
            if m.impl == Impl.WARP:
                return d
            return d * 2
        """,
        """
        import enum
        import jax
        class Impl(enum.Enum):
            JAX = "jax"
            WARP = "warp"
        @jax.jit
        def forward(m, d):
            if m.qpos == d:
                return d
            return d * 2
        """,
    ),
    "str-parameter": (
        "JS202",
        """
        import jax, jax.numpy as jnp
        def card_to_int(card: str) -> int:
            return int(card) - 1
        @jax.jit
        def to_key(pbn: str, x):
            return x + sum(card_to_int(c) for c in pbn[2:])
        """,
        """
        import jax, jax.numpy as jnp
        def card_to_int(card) -> int:
            return int(card) - 1
        @jax.jit
        def to_key(pbn, x):
            return x + card_to_int(x)
        """,
    ),
    # 2. integers derived from static shapes and fields
    "divmod-of-static-shape-and-field": (
        "JS201",
        """
        import dataclasses
        import jax
        def static_field():
            return dataclasses.field(metadata={"static": True})
        @dataclasses.dataclass
        class Grid:
            factors: tuple = static_field()
        @jax.jit
        def fold(x, grid: Grid):
            num_dims = x.ndim - 1
            shape = []
            for i in range(num_dims):
                _, ragged = divmod(x.shape[i], grid.factors[i])
                assert ragged == 0
                shape += [grid.factors[i], x.shape[i] // grid.factors[i]]
            smallest = min([s / f for s, f in zip(x.shape[:-1], grid.factors)])
            if smallest < 2:
                shape = shape[:1]
            return x.reshape(shape + [-1])
        """,
        """
        import jax
        @jax.jit
        def fold(x, factor):
            _, ragged = divmod(x.sum(), factor)
            assert ragged == 0
            return x
        """,
    ),
    # 3. paths that only run eagerly
    "none-branch-bound-by-partial": (
        "JS202",
        """
        from functools import partial
        import jax.numpy as jnp
        from jax import lax
        def update(x, nbrs):
            def rebuild(x, max_occupancy=None):
                occupancy = jnp.sum(x > 0)
                if max_occupancy is None:
                    max_occupancy = int(occupancy * 1.25)
                return x[:max_occupancy]
            return lax.cond(x.sum() > 0, partial(rebuild, max_occupancy=nbrs.max_occupancy), lambda v: v, x)
        """,
        """
        from functools import partial
        import jax.numpy as jnp
        from jax import lax
        def update(x, nbrs):
            def rebuild(x, max_occupancy=None):
                occupancy = jnp.sum(x > 0)
                if max_occupancy is None:
                    max_occupancy = int(occupancy * 1.25)
                return x[:max_occupancy]
            return lax.cond(x.sum() > 0, rebuild, lambda v: v, x)
        """,
    ),
    "none-branch-of-an-outer-argument": (
        "JS201",
        """
        import jax.numpy as jnp
        from jax import lax
        def neighbor_list(position, neighbors=None, box=1.0):
            def build(position):
                if neighbors is None:
                    if jnp.all(position < box / 3.0):
                        position = position * 2
                return position
            if neighbors is None:
                return build(position)
            return lax.cond(jnp.any(position > 1), build, lambda p: p, position)
        """,
        """
        import jax.numpy as jnp
        from jax import lax
        def neighbor_list(position, neighbors=None, box=1.0):
            def build(position):
                if neighbors is not None:
                    if jnp.all(position < box / 3.0):
                        position = position * 2
                return position
            if neighbors is None:
                return build(position)
            return lax.cond(jnp.any(position > 1), build, lambda p: p, position)
        """,
    ),
    "numpy-instance-guard": (
        "JS203",
        """
        from functools import partial
        import numpy as np
        import jax, jax.numpy as jnp
        @partial(jax.jit, out_shardings=None)
        def concatenate(x):
            if isinstance(x[0], np.ndarray):
                return np.concatenate(x)
            return jnp.concatenate(x)
        """,
        """
        from functools import partial
        import numpy as np
        import jax, jax.numpy as jnp
        @partial(jax.jit, out_shardings=None)
        def concatenate(x):
            if len(x) > 1:
                return np.concatenate(x)
            return jnp.concatenate(x)
        """,
    ),
    "not-an-array-guard": (
        "JS202",
        """
        import numpy as np
        import jax, jax.numpy as jnp
        @jax.jit
        def scale(x, n):
            if not isinstance(n, jax.Array):
                n = int(np.asarray(n).sum())
                return x * n
            return x * n
        """,
        """
        import numpy as np
        import jax, jax.numpy as jnp
        @jax.jit
        def scale(x, n):
            if isinstance(n, jax.Array):
                n = int(n.sum())
                return x * n
            return x * n
        """,
    ),
    # 4. truthiness of a container of arrays
    "annotated-tuple-of-arrays": (
        "JS201",
        """
        from typing import Tuple
        import jax, jax.numpy as jnp
        def update(x, limit: Tuple[jax.Array, jax.Array]):
            if limit:
                x = jnp.clip(x, limit[0], limit[1])
            return x
        def run(xs, limits):
            return jax.vmap(update)(xs, limits)
        """,
        """
        from typing import Tuple
        import jax, jax.numpy as jnp
        def update(x, limit: Tuple[jax.Array, jax.Array]):
            if limit[0] > 0:
                x = jnp.clip(x, limit[0], limit[1])
            return x
        def run(xs, limits):
            return jax.vmap(update)(xs, limits)
        """,
    ),
    # 5. jit of the same function object in a loop
    "jit-of-a-module-function-in-a-loop": (
        "JS303",
        """
        import jax
        from jax_md import quantity
        def simulate(states, mass):
            energies = []
            for state in states:
                energies.append(jax.jit(quantity.kinetic_energy)(velocity=state, mass=mass))
            return energies
        """,
        """
        import jax
        from jax_md import quantity
        def simulate(states, mass):
            energies = []
            for state in states:
                energies.append(jax.jit(lambda v: quantity.kinetic_energy(velocity=v, mass=mass))(state))
            return energies
        """,
    ),
    # 6. a dict made mutable by a conversion helper
    "dict-from-a-conversion-helper": (
        "JS204",
        """
        import jax
        from flax.core import unfreeze
        @jax.jit
        def reset_head(params):
            params = unfreeze(params)
            params["head"] = jax.numpy.zeros_like(params["head"])
            return params
        """,
        """
        import jax
        from flax.core import unfreeze
        @jax.jit
        def reset_head(params):
            head = unfreeze(params)["head"]
            head[0] = 0.0
            return head
        """,
    ),
    # hazards that were missed
    "argument-dict-changed-through-a-method": (
        "JS104",
        """
        import jax, jax.numpy as jnp, optax
        tx = optax.adam(1e-3)
        @jax.jit
        def step(state, grads):
            updates, opt_state = tx.update(grads, state["opt"])
            metrics = dict(state["metrics"])
            metrics.update(loss=jnp.mean(updates))
            return metrics, opt_state
        """,
        """
        import jax, jax.numpy as jnp
        @jax.jit
        def step(state, x):
            mask = state.pop("mask")
            state.update(loss=jnp.mean(x))
            return x * mask
        """,
    ),
    "numpy-style-assignment-in-a-helper": (
        "JS204",
        """
        import jax
        def apply_bc(u, v):
            return u.at[0, :].set(v)
        @jax.jit
        def solve(u, v):
            return apply_bc(u, v) * 2
        """,
        """
        import jax
        def apply_bc(u, v):
            u[0, :] = v
            return u
        @jax.jit
        def solve(u, v):
            return apply_bc(u, v) * 2
        """,
    ),
    "batches-up-to-a-shape": (
        "JS304",
        """
        import jax
        @jax.jit
        def embed(tokens):
            return tokens.sum()
        def run(x, bs):
            return [embed(x[i:i + bs]) for i in range(0, x.shape[0] - bs + 1, bs)]
        """,
        """
        import jax
        @jax.jit
        def embed(tokens):
            return tokens.sum()
        def run(x, bs):
            out = []
            for i in range(0, x.shape[0], bs):
                out.append(embed(x[i:i + bs]))
            return out
        """,
    ),
    "static-argument-from-data": (
        "JS302",
        """
        from functools import partial
        import jax
        @partial(jax.jit, static_argnums=(1,))
        def top(x, k):
            return jax.lax.top_k(x, k)[0]
        def select(x, scores, t):
            return top(x, x.shape[0] // 2)
        """,
        """
        from functools import partial
        import jax
        @partial(jax.jit, static_argnums=(1,))
        def top(x, k):
            return jax.lax.top_k(x, k)[0]
        def select(x, scores, t):
            k = int((scores > t).sum())
            return top(x, k)
        """,
    ),
    "jit-of-a-partial-on-every-call": (
        "JS303",
        """
        from functools import partial
        import jax
        def kernel(x, y, *, scale):
            return x * y * scale
        scaled = jax.jit(partial(kernel, scale=2.0))
        def fused_multiply(x, y):
            return scaled(x, y)
        """,
        """
        from functools import partial
        import jax
        def kernel(x, y, *, scale):
            return x * y * scale
        def fused_multiply(x, y, scale=1.0):
            f = jax.jit(partial(kernel, scale=scale))
            return f(x, y)
        """,
    ),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_correct_code_is_quiet(name: str) -> None:
    rule, quiet, _ = PAIRS[name]
    assert rule not in codes(quiet)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_hazardous_sibling_is_found(name: str) -> None:
    rule, _, hazard = PAIRS[name]
    assert rule in codes(hazard)
