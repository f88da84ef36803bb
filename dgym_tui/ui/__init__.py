"""The Textual UI. Importing it sets Textual's frame rate before Textual is imported."""

import os

# At most 60 frames a second (Textual's default), a frame that follows another within a frame's
# time waits for Textual's next tick, up to 33 ms: with `n` held down each new line waited up to
# 15 ms for its frame (held n, median time to the screen: 37 ms at 60, 22 ms at 120). A person's
# TEXTUAL_FPS wins.
os.environ.setdefault("TEXTUAL_FPS", "120")
