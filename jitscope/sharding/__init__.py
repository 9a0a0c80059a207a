"""Sharded programs: ``--devices``/``--mesh``, shardings in argument specs, and what the partitioner did.

``mesh`` sets up devices and the named mesh (before JAX starts its backends), ``specs``
checks and builds shardings for argument specs, ``collectives`` reads the collectives out
of optimised HLO text, and ``analyse`` turns a compiled sharded program into a
``ShardingRecord``. Live JAX objects stay here and in ``jaxcompat.sharding``.
"""
