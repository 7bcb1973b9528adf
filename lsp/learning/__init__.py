"""The learning loop.

Timelines, settling, manual fixes, verification, the knowledge store's side
of the server, and the learned fixes instantiated for code actions.
"""
