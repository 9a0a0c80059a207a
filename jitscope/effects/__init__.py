"""The effect monitor: what a user's function did on the host while JAX traced it.

Entry point: :func:`jitscope.effects.monitor.watch_effects`, a context manager that JAX's
trace runs inside (``jitscope trace`` through ``tracing/session.py``, ``jitscope run`` through
``run/observer.py``). It yields an :class:`~jitscope.effects.watch.EffectWatch`; its
``finish()`` gives an :class:`~jitscope.model.effects.EffectsRecord` of effects at the file,
line and function of the user's code that ran them (print, logging, file/OS/network I/O,
host randomness and clocks, writes to globals, in-place changes of arguments and closures).

How calls are seen
------------------
* Python 3.11: a profile hook (``sys.setprofile``, ``monitor.py``). ``c_call`` events carry
  the C function (``print``, ``time.time``, ``list.append`` bound to its list) and ``call``
  events the new frame of a Python function (``logging.info``). NumPy's Cython random methods
  and print handed to C code (``map(print, xs)``, a ``functools.partial`` of print) raise no
  event: their call sites are found in the bytecode and confirmed by line events turned on
  (``sys.settrace`` plus ``frame.f_trace``) only on the frames that hold them (``frames.py``).
  The hook is off inside JAX's own primitives' binds, nested jits, a tracer's operators, a
  gradient's backward pass and what describes a function or tracer (``jitscope/jaxcompat/
  hook_gate.py``, each where it cannot run the user's code): while any hook is set 3.11 runs every
  instruction on its slow path.
* Python 3.12+: ``sys.monitoring`` (PEP 669, ``monitoring.py``). A callback returns
  ``DISABLE`` for a library's code location, which then never calls it again, so JAX runs at
  full speed once its locations are seen (a few percent on a warm trace, against 1.45-1.8x for the
  gated profile hook on 3.11; a process's first trace, where every location is new, pays more: the
  nnx GPT's 289 -> 460 ms, docs/performance.md); the CALL event
  carries the callable itself, so Cython calls need no line events. Its callbacks make the
  same ``EffectWatch`` calls as the profile hook, so both back ends report the same records.
* Either way, stores (``d[k] = v``, ``obj.x = v``, ``global x``) are opcodes, not calls: each
  user code object's bytecode is read once (``bytecode.py``: a symbolic stack walk in
  ``stack_walk.py`` recording ``code_facts.py``'s records) for what its stores can touch, and
  those objects are compared with a snapshot when the frame returns (``state.py``).

An effect counts only when its *immediate caller* is user code (``jitscope.userframes``), so
JAX's own logging and clock reads are never reported while the user's helpers are. The hot
path is one dict lookup per event, and the monitor never raises: a failure inside it becomes
a note in the record.

The catalogue
-------------
What counts as an effect is data, in :mod:`jitscope.model.effect_catalogue`, shared with the
linter's JS101/JS102/JS106. ``catalog.py`` turns it into lookup tables (C function objects,
code objects, owner types whose every method is an effect) over the modules already imported;
adding an effect means adding an entry there, once. ``watch.py`` decides what each event means,
``c_calls.py`` handles builtins and C-level calls.
"""
