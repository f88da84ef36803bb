"""The output cap: what a flood of output leaves for the person and the agent to read."""

from __future__ import annotations

from dgym_tui.sandbox.base import OutputCap


def test_small_output_is_kept_whole():
    cap = OutputCap(100)
    for part in ("abc", "def", ""):
        cap.feed(part)
    assert (cap.text(), cap.dropped) == ("abcdef", 0)


def test_head_and_tail_are_kept_and_the_middle_is_counted():
    cap = OutputCap(10)
    for i in range(100):
        cap.feed(f"{i:03d}\n")  # 400 characters in 4-character pieces
    text = cap.text()
    assert text.startswith("000\n0") and text.endswith("\n099\n")
    assert cap.dropped == 390 and "390 characters cut here" in text
    head, _, tail = text.partition("\n[...")
    assert len(head) == 5 and len(tail.split("...]\n", 1)[1]) == 5


def test_one_huge_chunk_and_bytes():
    cap = OutputCap(8)
    cap.feed(b"HEAD" + b"m" * 1000 + b"TAIL")
    assert cap.dropped == 1000
    assert cap.text().startswith("HEAD\n[... output truncated: 1000 bytes") and cap.text().endswith("TAIL")
