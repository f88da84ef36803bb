"""Small frames go to the terminal from the UI thread; large ones through Textual's writer thread.

Textual's Linux driver hands every frame to a writer thread, so that the UI never waits on a slow
terminal. For a step's frame (a few hundred bytes: two source rows) the hand-over costs more than
the write: the thread has to wake up and take the GIL, a wait that grows with the machine's load.
Here a frame of at most DIRECT_MAX bytes is written at once by the caller when nothing is queued
or being written ahead of it (order is kept); anything else, and any frame while the thread is
writing, goes through the thread as before.
"""

from __future__ import annotations

import threading

from textual.drivers import _writer_thread, linux_driver

DIRECT_MAX = 4096  # bytes a pty takes at once without the writer blocking (its buffer is larger)


class FrameWriter(_writer_thread.WriterThread):
    def __init__(self, file) -> None:
        super().__init__(file)
        self._writing = threading.Lock()  # held while a frame is being written, by either thread
        self._count = threading.Lock()  # guards _pending; never held while writing
        self._pending = 0  # frames handed to the thread and not yet written

    def write(self, text: str) -> None:
        if len(text) <= DIRECT_MAX and self._writing.acquire(blocking=False):
            try:
                with self._count:
                    ahead = self._pending  # nothing may overtake a frame handed to the thread
                if not ahead:
                    self._file.write(text)
                    self._file.flush()
                    return
            finally:
                self._writing.release()
        with self._count:
            self._pending += 1
        self._queue.put(text)

    def run(self) -> None:
        get, qsize = self._queue.get, self._queue.qsize
        while (text := get()) is not None:
            with self._writing:
                self._file.write(text)
                if qsize() == 0:
                    self._file.flush()
            with self._count:
                self._pending -= 1
        self._file.flush()


def install() -> None:
    """Textual's Linux driver makes its writer from this module's class from now on."""
    linux_driver.WriterThread = FrameWriter
