"""Records: frozen dataclasses that cross stage boundaries.

Records hold no JAX objects, so renderers never import jax and every report can
be written to JSON and read back (``to_jsonable`` / ``from_jsonable``).
"""

from jitscope.model.common import SCHEMA_VERSION, Location, from_jsonable, to_jsonable

__all__ = ["SCHEMA_VERSION", "Location", "from_jsonable", "to_jsonable"]
