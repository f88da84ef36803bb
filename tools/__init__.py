"""The debugging tools shared by the agent and the person (installed as ``dgym_tui.tools``)."""
