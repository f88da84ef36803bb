"""The agent: a model (any litellm model, or a scripted one), its tools, the person's approval.

Nothing here is imported eagerly: litellm takes seconds to import, so `dgym_tui.agent.litellm_model`
loads it only when a model is actually queried (or warmed up), in a background thread.
"""
