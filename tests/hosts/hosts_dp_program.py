"""A small data-parallel training loop, one process of several, joined by ``jax.distributed``.

Run by tests/hosts (each process under ``jitscope run``), with the process's place in the job in
the environment: ``HOSTS_COORDINATOR`` (host:port of process 0's coordinator), ``HOSTS_COUNT``,
``HOSTS_INDEX``. ``argv[1]`` picks a variant:

- ``same``: every process runs the same steps (one compile of each function on each process);
- ``short``: process 1 alone gets a shorter last batch (6 rows, not 8): its ``local_grads``
  recompiles there and nowhere else;
- ``branch``: process 1 takes another Python branch under ``jit`` in ``apply_update`` (the step with
  the all-reduce): the two processes compile different programs;
- ``killed``: process 1 is killed (SIGKILL) after its first step, as a launcher kills a hung process;
  process 0 waits in the next step's all-reduce until the test kills it too.

Each process computes the gradient of its own batch on its own device (``local_grads``), then
``apply_update`` averages the gradients across processes (an all-reduce over the ``data`` axis,
CPU collectives through gloo) and updates the replicated parameters.
"""

import os
import signal
import sys
import time

import jax
import numpy as np

jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=os.environ["HOSTS_COORDINATOR"],
                           num_processes=int(os.environ["HOSTS_COUNT"]),
                           process_id=int(os.environ["HOSTS_INDEX"]))

import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

VARIANT = sys.argv[1] if len(sys.argv) > 1 else "same"
STEPS, BATCH, FEATURES = 3, 8, 4

mesh = Mesh(np.array(jax.devices()), ("data",))
replicated = NamedSharding(mesh, P())
one_row_per_process = NamedSharding(mesh, P("data"))


@jax.jit
def local_grads(params, x, y):
    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    return jax.grad(loss)(params)


@jax.jit
def apply_update(params, grads):
    mean = jax.tree.map(lambda g: g.mean(axis=0), grads)  # across processes: an all-reduce
    lr = 0.1
    if VARIANT == "branch" and jax.process_index() == 1:
        lr = 0.05  # a branch on the host under jit: this process compiles another program
    return jax.tree.map(lambda p, g: p - lr * g, params, mean)


def global_params(values):
    return {k: jax.make_array_from_callback(v.shape, replicated, lambda index, v=v: v[index])
            for k, v in values.items()}


def stacked(local):
    """This process's gradient as its row of an array with one row per process."""
    return {k: jax.make_array_from_process_local_data(one_row_per_process, np.asarray(v)[None])
            for k, v in local.items()}


def main():
    rng = np.random.default_rng(jax.process_index())
    params = global_params({"w": np.zeros((FEATURES, 1), np.float32), "b": np.zeros((1,), np.float32)})
    for step in range(STEPS):
        rows = 6 if VARIANT == "short" and jax.process_index() == 1 and step == STEPS - 1 else BATCH
        x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
        y = x.sum(axis=1, keepdims=True)
        local = {k: v.addressable_data(0) for k, v in params.items()}
        params = apply_update(params, stacked(local_grads(local, x, y)))
        if VARIANT == "killed" and jax.process_index() == 1:
            jax.block_until_ready(params)
            time.sleep(1.0)  # hung for a while, then killed: no exit handler runs, no final report
            os.kill(os.getpid(), signal.SIGKILL)
    print(f"process {jax.process_index()}: w = {np.asarray(params['w'].addressable_data(0)).ravel().round(3)}")


if __name__ == "__main__":
    main()
