"""The command palette (ctrl+p): the app's commands and a fuzzy file finder over the repo."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

MAX_FILE_HITS = 200  # the palette shows the best few anyway; cap the work per keystroke


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

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

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
                yield Hit(score * 0.9, matcher.highlight(path), partial(main.open_file, path, focus=True),
                          help="open file")
                hits += 1
                if hits >= MAX_FILE_HITS:
                    return
