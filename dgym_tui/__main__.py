from dgym_tui.cli import main

raise SystemExit(main())
