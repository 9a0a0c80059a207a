"""Is sent SIGTERM while its main thread waits in XLA, where no Python signal handler can run (issue 30): a
collective that never completes, here a loop that never ends."""
import os
import signal
import threading

import jax
from jax import lax

spin = jax.jit(lambda x: lax.while_loop(lambda c: c > -1.0, lambda c: c + 1.0, x)).lower(0.0).compile()
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
spin(0.0).block_until_ready()  # never returns
