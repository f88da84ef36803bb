"""The command palette (ctrl+p): the app's commands and a fuzzy file finder over the repo.

With an empty query the palette lists what every provider "discovers", ordered by score and
then by arrival; Textual's own commands (Theme, Keys, Screenshot...) score 0, and its providers
run concurrently, so which list came first was a race. Ours are scored above 0: the app's
commands first, then the repo's files, then Textual's.
"""

from __future__ import annotations

from functools import partial

from textual.command import Hit, Hits, Provider

MAX_FILE_HITS = 200  # the palette shows the best few anyway; cap the work per keystroke
COMMAND_RANK = 2.0  # empty query: above the repo's files...
FILE_RANK = 1.0  # ... which come before Textual's commands (0)


class DgymCommands(Provider):
    def _main(self):
        from dgym_tui.ui.screens.main import MainScreen

        screen = self.screen
        if isinstance(screen, MainScreen):
            return screen
        return next((s for s in self.app.screen_stack if isinstance(s, MainScreen)), None)

    def _commands(self):
        main = self._main()
        if main is None:
            return []
        return self.app.palette_commands(main)

    def _open(self, main, path: str):
        return partial(main.open_file, path, focus=True)

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield Hit(COMMAND_RANK, title, callback, text=title, help=help_text)
        main = self._main()
        if main is None:
            return
        for path in main.repo_files[:MAX_FILE_HITS]:
            yield Hit(FILE_RANK, path, self._open(main, path), text=path, help="open file")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
        main = self._main()
        if main is None or not query.strip():
            return
        hits = 0
        for path in main.repo_files:
            score = matcher.match(path)
            if score > 0:
                yield Hit(score * 0.9, matcher.highlight(path), self._open(main, path), help="open file")
                hits += 1
                if hits >= MAX_FILE_HITS:
                    return
