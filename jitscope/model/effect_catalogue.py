"""The one catalogue of host calls that are trace-time side effects.

Both checkers read it: the static linter (JS101 print/log, JS102 I/O, JS106 randomness and
clocks: a call whose qualified name the catalogue knows) and the tracer's effect monitor
(``jitscope.effects.catalog`` turns the entries into lookup tables of the function
objects that are imported). Adding a side effect means adding it here, once.

Plain data: records and frozensets, no imports of the modules they name.

Two sides see calls differently, and two flags say where an entry applies:

- the linter matches qualified names, so it can cover a whole module (``requests.*``):
  ``whole_module`` (every call into the module, except the :data:`HARMLESS` ones);
- the tracer watches concrete functions, and would also see library code call them while it
  traces; ``traced=False`` keeps an entry out of the monitor (``json.dump`` is fine inside
  a library's tracing machinery but I/O in a user's traced function), ``linted=False`` keeps
  it out of the linter (``warnings.warn`` in traced code is usually a deliberate trace-time
  warning).
"""

from __future__ import annotations

from dataclasses import dataclass

from jitscope.model.effects import EffectKind

K = EffectKind


@dataclass(frozen=True, slots=True)
class EffectEntry:
    """Functions of one module whose call is a trace-time side effect of one kind."""

    module: str
    #: attribute paths: ``Class.method`` names a method; a class alone means constructing it
    names: tuple[str, ...]
    kind: EffectKind
    #: the linter also flags every other call into ``module`` (not just ``names``)
    whole_module: bool = False
    #: the tracer's effect monitor watches ``names``
    traced: bool = True
    #: the static linter flags calls of ``names`` (and the module, with ``whole_module``)
    linted: bool = True


@dataclass(frozen=True, slots=True)
class EffectfulType:
    """A type whose every public method call is an effect (``random.Random``, sockets, open files)."""

    module: str
    name: str
    kind: EffectKind


#: Logging methods, of the ``logging`` module and of logger objects.
LOG_METHODS: frozenset[str] = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)
_LOG = tuple(
    sorted(
        LOG_METHODS,
        key=["debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"].index,
    )
)

#: Methods that write to a text stream: how ``sys.stdout.write`` is recognised.
STREAM_WRITE_METHODS: frozenset[str] = frozenset({"write", "writelines"})

#: Methods of an open file that touch the file.
FILE_METHODS: frozenset[str] = frozenset(
    {"read", "read1", "readinto", "readline", "readlines", "write", "writelines", "flush", "seek", "truncate"}
)

# fmt: off
#: Methods that change a list, dict, set, bytearray, deque or queue in place: the one list both the
#: static rules (JS104, JS105) and the tracer's effect monitor read.
MUTATING_METHODS: frozenset[str] = frozenset(
    {
        "append", "appendleft", "extend", "extendleft", "insert", "pop", "popleft", "popitem", "remove",
        "clear", "sort", "reverse", "rotate", "update", "setdefault", "add", "discard", "put",
        "difference_update", "intersection_update", "symmetric_difference_update",
        "__setitem__", "__delitem__", "__iadd__", "__imul__", "__ior__", "__iand__", "__ixor__", "__isub__",
    }
)

_PATH_METHODS = (
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "touch", "mkdir", "unlink",
    "rmdir", "rename", "replace", "iterdir", "glob", "rglob", "exists", "is_file", "is_dir",
    "stat", "chmod", "symlink_to", "hardlink_to", "readlink", "samefile", "walk",
)

CATALOGUE: tuple[EffectEntry, ...] = (
    # printing and logging (JS101)
    EffectEntry("builtins", ("print",), K.PRINT),
    EffectEntry("pprint", ("pprint", "pp"), K.PRINT, traced=False),
    EffectEntry("rich", ("print",), K.PRINT, traced=False),
    EffectEntry("tqdm", ("tqdm.write",), K.PRINT, traced=False),
    # the tracer recognises stream writes by method name and receiver (STREAM_WRITE_METHODS)
    EffectEntry("sys.stdout", ("write", "writelines", "flush"), K.STDOUT, traced=False),
    EffectEntry("sys.stderr", ("write", "writelines", "flush"), K.STDOUT, traced=False),
    EffectEntry("logging", _LOG, K.LOGGING),
    EffectEntry("logging", tuple(f"{o}.{n}" for o in ("Logger", "LoggerAdapter") for n in _LOG), K.LOGGING),
    EffectEntry("absl.logging", _LOG, K.LOGGING, traced=False),
    EffectEntry("warnings", ("warn", "warn_explicit"), K.LOGGING, linted=False),
    # files, the OS, the network, subprocesses (JS102)
    EffectEntry("builtins", ("open",), K.FILE_IO),
    EffectEntry("builtins", ("input",), K.FILE_IO, traced=False),
    EffectEntry("io", ("open", "open_code"), K.FILE_IO),
    EffectEntry("os", ("open", "read", "write", "truncate", "sendfile", "fdopen"), K.FILE_IO),
    EffectEntry(
        "os",
        (
            "remove", "unlink", "rename", "renames", "replace", "mkdir", "makedirs", "rmdir", "removedirs",
            "listdir", "scandir", "walk", "stat", "lstat", "chdir", "chmod", "chown", "link", "symlink",
            "utime", "access", "putenv", "unsetenv", "mkfifo", "_Environ.__setitem__",
            "_Environ.__delitem__", "_Environ.clear", "_Environ.pop", "_Environ.update",
            "_Environ.setdefault",
        ),
        K.OS,
        whole_module=True,
    ),
    EffectEntry("os.path", ("exists", "isfile", "isdir", "islink", "getsize", "getmtime", "getatime"), K.OS),
    EffectEntry("os.path", ("lexists", "ismount", "getctime", "realpath", "samefile"), K.OS, traced=False),
    EffectEntry("os", ("urandom", "getrandom"), K.RANDOMNESS),
    EffectEntry(
        "os",
        (
            "system", "popen", "fork", "forkpty", "kill", "killpg", "execv", "execve", "execvp", "execvpe",
            "execl", "execle", "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl",
            "spawnle", "spawnlp", "spawnlpe", "posix_spawn", "posix_spawnp",
        ),
        K.SUBPROCESS,
    ),
    EffectEntry(
        "shutil",
        (
            "copy", "copy2", "copyfile", "copyfileobj", "copytree", "copymode", "copystat", "rmtree", "move",
            "make_archive", "unpack_archive", "disk_usage", "chown",
        ),
        K.FILE_IO,
        whole_module=True,
    ),
    EffectEntry(
        "tempfile",
        (
            "mkstemp", "mkdtemp", "mktemp", "NamedTemporaryFile", "TemporaryFile", "TemporaryDirectory",
            "SpooledTemporaryFile",
        ),
        K.FILE_IO,
        whole_module=True,
    ),
    EffectEntry("pathlib", tuple(f"Path.{name}" for name in _PATH_METHODS), K.FILE_IO),
    EffectEntry("glob", (), K.FILE_IO, whole_module=True),
    EffectEntry("sqlite3", (), K.FILE_IO, whole_module=True),
    EffectEntry("pickle", ("load", "dump"), K.FILE_IO, traced=False),
    EffectEntry("json", ("load", "dump"), K.FILE_IO, traced=False),
    EffectEntry(
        "numpy",
        ("save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile"),
        K.FILE_IO,
        traced=False,
    ),
    EffectEntry(
        "socket",
        ("socket", "create_connection", "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex",
         "gethostbyaddr", "socketpair", "fromfd"),
        K.NETWORK,
        whole_module=True,
    ),
    EffectEntry("urllib.request", ("urlopen", "urlretrieve", "OpenerDirector.open"), K.NETWORK, whole_module=True),
    EffectEntry(
        "http.client",
        ("HTTPConnection.request", "HTTPConnection.connect", "HTTPConnection.getresponse",
         "HTTPSConnection.connect"),
        K.NETWORK,
        whole_module=True,
    ),
    EffectEntry("requests", (), K.NETWORK, whole_module=True),
    EffectEntry("httpx", (), K.NETWORK, whole_module=True),
    EffectEntry("aiohttp", (), K.NETWORK, whole_module=True),
    EffectEntry("ftplib", (), K.NETWORK, whole_module=True),
    EffectEntry("smtplib", (), K.NETWORK, whole_module=True),
    EffectEntry("webbrowser", ("open",), K.NETWORK, traced=False),
    EffectEntry(
        "subprocess",
        ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"),
        K.SUBPROCESS,
        whole_module=True,
    ),
    # randomness and clocks (JS106)
    EffectEntry(
        "random",
        (
            "random", "uniform", "triangular", "randint", "randrange", "choice", "choices", "shuffle",
            "sample", "seed", "getstate", "setstate", "getrandbits", "randbytes", "gauss", "normalvariate",
            "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "betavariate",
            "paretovariate", "weibullvariate", "binomialvariate",
        ),
        K.RANDOMNESS,
        whole_module=True,
    ),
    # NumPy's random functions are Cython: the monitor finds them by name (numpy_random_support)
    EffectEntry("numpy.random", (), K.RANDOMNESS, whole_module=True),
    EffectEntry("secrets", ("token_bytes", "token_hex", "token_urlsafe", "randbelow", "randbits"), K.RANDOMNESS,
                whole_module=True),
    EffectEntry("uuid", ("uuid1", "uuid4"), K.RANDOMNESS),
    EffectEntry(
        "time",
        (
            "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
            "process_time", "process_time_ns", "thread_time", "thread_time_ns", "localtime", "ctime",
            "strftime", "clock_gettime", "clock_gettime_ns",
        ),
        K.CLOCK,
    ),
    EffectEntry("time", ("gmtime",), K.CLOCK, traced=False),
    EffectEntry("datetime", ("datetime.now", "datetime.utcnow", "datetime.today", "date.today"), K.CLOCK),
)
# fmt: on

#: Functions of modules in :data:`CATALOGUE` with ``whole_module`` that have no side effect.
HARMLESS: frozenset[str] = frozenset(
    f"os.{name}"
    for name in [
        "fspath",
        "fsencode",
        "fsdecode",
        "getenv",
        "cpu_count",
        "getpid",
        "getcwd",
        "get_terminal_size",
        "sep",
        "linesep",
        "name",
        "environ",
        "PathLike",
        "strerror",
    ]
)

#: Types whose every public method call is an effect. Checked after the stdout/stderr test, so
#: ``sys.stdout.write`` is reported as stdout.
EFFECTFUL_TYPES: tuple[EffectfulType, ...] = (
    EffectfulType("random", "Random", K.RANDOMNESS),
    EffectfulType("random", "SystemRandom", K.RANDOMNESS),
    EffectfulType("socket", "socket", K.NETWORK),
    EffectfulType("io", "FileIO", K.FILE_IO),
    EffectfulType("io", "BufferedReader", K.FILE_IO),
    EffectfulType("io", "BufferedWriter", K.FILE_IO),
    EffectfulType("io", "BufferedRandom", K.FILE_IO),
    EffectfulType("io", "TextIOWrapper", K.FILE_IO),
)


def _linted_tables() -> tuple[dict[str, EffectKind], dict[str, EffectKind | None]]:
    exact: dict[str, EffectKind] = {}
    modules: dict[str, EffectKind | None] = {}
    for entry in CATALOGUE:
        if not entry.linted:
            continue
        for name in entry.names:
            exact.setdefault(f"{entry.module}.{name}", entry.kind)
        if entry.whole_module:
            modules[entry.module] = entry.kind
        else:
            modules.setdefault(entry.module, None)
    return exact, modules


_EXACT, _MODULES = _linted_tables()


def effect_of_call(qualified: str) -> EffectKind | None:
    """The kind of side effect a call of ``qualified`` (``os.remove``, ``numpy.random.rand``) is, for
    the linter: a catalogued name, else a call into the most specific catalogued module when that
    module counts as a whole (``os.path.join`` is pure: ``os.path`` is catalogued name by name)."""
    kind = _EXACT.get(qualified)
    if kind is not None:
        return kind
    parts = qualified.split(".")
    for end in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:end])
        if module in _MODULES:
            whole = _MODULES[module]
            if whole is None or f"{module}.{parts[end]}" in HARMLESS:
                return None
            return whole
    return None


def builtin_effect(name: str) -> EffectKind | None:
    """The kind of side effect a call of the builtin ``name`` (``print``, ``open``) is, for the linter."""
    return _EXACT.get(f"builtins.{name}")


def linted_methods(module: str, owner: str) -> frozenset[str]:
    """Catalogued methods of ``module.owner`` (``pathlib``, ``Path`` -> ``read_text``, ...)."""
    prefix = f"{owner}."
    return frozenset(
        name[len(prefix) :]
        for entry in CATALOGUE
        if entry.module == module and entry.linted
        for name in entry.names
        if name.startswith(prefix)
    )
