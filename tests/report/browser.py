"""A small Chrome DevTools Protocol client for the HTML report tests: headless Chromium, no Playwright.

``Browser.start()`` runs Debian's ``chromium`` headless on a free port, ``open(path)`` loads a
file and records console errors and uncaught exceptions, ``evaluate(js)`` returns a value,
``screenshot(path)`` writes a PNG. Needs ``websocket-client`` (the ``test`` extra).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--remote-debugging-port=0", "--remote-allow-origins=*")


def find_chromium() -> str | None:
    for name in (os.environ.get("JITSCOPE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    def __init__(self, proc: subprocess.Popen[str], ws: Any, profile: str) -> None:
        self.proc, self.ws, self.profile = proc, ws, profile
        self.next_id = 0
        self.errors: list[str] = []

    @classmethod
    def start(cls, executable: str, width: int = 1400, height: int = 1000, timeout: float = 30) -> Browser:
        import websocket

        profile = tempfile.mkdtemp(prefix="jitscope-chromium-")
        proc = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                                 "about:blank"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        assert proc.stderr is not None
        deadline, port = time.monotonic() + timeout, None
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {proc.returncode}")
            match = re.search(r"DevTools listening on ws://[\d.]+:(\d+)/", line)
            port = int(match.group(1)) if match else None
        if port is None:
            proc.kill()
            raise RuntimeError("chromium did not open its DevTools port")
        with urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as response:
            pages = [t for t in json.load(response) if t["type"] == "page"]
        ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        browser = cls(proc, ws, profile)
        for domain in ("Page", "Runtime", "Log"):
            browser.call(f"{domain}.enable")
        return browser

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(params["entry"]["text"])

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._event(message)

    def wait_for(self, event: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if message.get("method") == event:
                return
            self._event(message)
        raise TimeoutError(event)

    def open(self, path: Path) -> None:
        self.errors.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"].get("exception", {}).get("description", expression))
        return result["result"].get("value")

    def emulate(self, *, dark: bool = False, javascript: bool = True, media: str = "") -> None:
        """Colour scheme, script on or off, and the media type ("print" for print CSS; "" for screen)."""
        self.call("Emulation.setEmulatedMedia", media=media,
                  features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])
        self.call("Emulation.setScriptExecutionDisabled", value=not javascript)

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        import base64

        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", **params)["data"]))

    def pdf(self) -> bytes:
        """The page printed to PDF (print CSS, backgrounds off, as a person's print dialog would)."""
        import base64

        return base64.b64decode(self.call("Page.printToPDF", printBackground=False)["data"])

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.kill()
            self.proc.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)
