"""SIGTERM that is the program's own business (issue 30): a forked child killed by it dies as under python,
and a handler the program installs gets it; jitscope's watchdog must not end the program for either."""
import os
import signal
import sys
import time

child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
os.kill(child, signal.SIGTERM)
_, status = os.waitpid(child, 0)
print("child", "killed by SIGTERM" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
      else f"status {status}")

got = []
signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(2.5)  # longer than jitscope's grace
print("handled", got)
sys.exit(3)
