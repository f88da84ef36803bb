"""The terminal writer (dgym_tui/ui/terminal_writer.py): small frames written at once by the
caller, large ones by the writer thread, and never out of order."""

from __future__ import annotations

import io
import os
import random
import threading
import time

from textual.drivers import linux_driver

from dgym_tui.ui import terminal_writer
from dgym_tui.ui.terminal_writer import DIRECT_MAX, FrameWriter


class SlowFile(io.StringIO):
    """A terminal that reads slowly: each write takes a while (the writer thread then queues)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay, self.flushes = delay, 0
        self.writers: set[str] = set()

    def write(self, text: str) -> int:
        self.writers.add(threading.current_thread().name)
        if len(text) > DIRECT_MAX:
            time.sleep(self.delay)
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1


def test_a_small_frame_is_written_at_once_by_the_caller_and_never_overtakes_a_queued_one():
    read_fd, write_fd = os.pipe()
    out = os.fdopen(write_fd, "w")
    writer = FrameWriter(out)  # its thread not started yet: only the caller can write
    try:
        writer.write("step frame")
        os.set_blocking(read_fd, False)
        assert os.read(read_fd, 100) == b"step frame"  # on the terminal before write() returned
        big = "x" * (DIRECT_MAX + 1)
        writer.write(big)  # too big for the caller: handed to the thread
        writer.write("after")  # must wait behind it
        try:
            os.read(read_fd, 100)
            raise AssertionError("a frame went out ahead of the one queued before it")
        except BlockingIOError:
            pass
        writer.start()
        writer.stop()
        os.set_blocking(read_fd, True)
        got = b""
        while len(got) < len(big) + len("after"):
            got += os.read(read_fd, 65536)
        assert got == (big + "after").encode()
    finally:
        out.close()
        os.close(read_fd)


def test_frames_of_every_size_from_two_threads_arrive_whole_and_in_each_threads_order():
    out = SlowFile(delay=0.002)
    writer = FrameWriter(out)
    writer.start()
    rng = random.Random(29)
    sizes = [rng.choice([10, 300, DIRECT_MAX, DIRECT_MAX + 1, 20000]) for _ in range(60)]

    def produce(tag: str) -> None:
        for n, size in enumerate(sizes):
            writer.write(f"<{tag}{n}:" + "." * size + ">")

    other = threading.Thread(target=produce, args=("b",), name="other")
    other.start()
    produce("a")
    other.join()
    writer.stop()
    text = out.getvalue()
    for tag in "ab":
        frames = [piece.split(":")[0] for piece in text.split("<")[1:] if piece.startswith(tag)]
        assert frames == [f"{tag}{n}" for n in range(len(sizes))]  # whole, in order, none lost


def test_install_makes_textuals_linux_driver_use_it():
    before = linux_driver.WriterThread
    try:
        terminal_writer.install()
        assert linux_driver.WriterThread is FrameWriter
    finally:
        linux_driver.WriterThread = before
